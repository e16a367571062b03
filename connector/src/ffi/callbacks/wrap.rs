//! Wrapping: the `wrap_cls` callbacks, for objects HDF5 wraps outside h5prov's callbacks
//! (`get_object`, the wrap context, `wrap_object`, `unwrap_object`).

use crate::ffi::query::{self, quietly};
use crate::ffi::{guard, UnderVol, VolObj};
use crate::ops::Op;
use crate::tree::{self, Kind, NewNode, Node};
use h5prov_bindings as b;
use h5prov_bindings::*;
use std::ffi::c_void;
use std::sync::Arc;

struct WrapCtx {
    vol: UnderVol,
    under_ctx: *mut c_void,
    file: Option<Arc<Node>>,
}

pub unsafe extern "C" fn get_object(obj: *const c_void) -> *mut c_void {
    guard(std::ptr::null_mut(), Op::WrapGetObject, || {
        // SAFETY: HDF5 passes a non-null object: ours, or the library's own.
        if !obj.is_null() && !unsafe { VolObj::is_ours(obj) } {
            // Passed through h5prov's level unwrapped (see `VolObj`): already the
            // library's object.
            return Ok(obj.cast_mut());
        }
        // SAFETY: our wrapper.
        let o = unsafe { VolObj::from_ptr(obj.cast_mut()) }?;
        // SAFETY: forwarded.
        Ok(unsafe { b::H5VLget_object(o.under, o.vol.id()) })
    })
}

pub unsafe extern "C" fn get_wrap_ctx(obj: *const c_void, ctx: *mut *mut c_void) -> herr_t {
    guard(-1, Op::WrapGetCtx, || {
        // SAFETY: our wrapper.
        let o = unsafe { VolObj::from_ptr(obj.cast_mut()) }?;
        let mut under_ctx = std::ptr::null_mut();
        // The native connector's context is NULL: one HDF5 API call fewer on almost every
        // HDF5 call the application makes (each sets up a wrap context).
        if !o.vol.is_native() {
            // SAFETY: forwarded.
            unsafe { b::H5VLget_wrap_ctx(o.under, o.vol.id(), &mut under_ctx) };
        }
        let file = o.node.as_ref().and_then(|n| {
            if n.kind == Kind::File {
                Some(n.clone())
            } else {
                n.file.clone()
            }
        });
        let w = Box::new(WrapCtx {
            vol: o.vol.clone(),
            under_ctx,
            file,
        });
        // SAFETY: valid out-pointer.
        unsafe { *ctx = Box::into_raw(w).cast() };
        Ok(0)
    })
}

pub unsafe extern "C" fn wrap_object(
    obj: *mut c_void,
    ty: H5I_type_t,
    ctx: *mut c_void,
) -> *mut c_void {
    guard(std::ptr::null_mut(), Op::WrapObject, || {
        // SAFETY: a WrapCtx we created.
        let w = unsafe { ctx.cast::<WrapCtx>().as_ref() }.ok_or("NULL wrap context")?;
        // SAFETY: forwarded.
        let under = unsafe { b::H5VLwrap_object(obj, ty, w.vol.id(), w.under_ctx) };
        if under.is_null() {
            return Ok(std::ptr::null_mut());
        }
        // No metadata query here: HDF5 is in the middle of registering an id. A file is
        // the context's own file (HDF5 re-wraps it after every open and for H5Iget_file_id:
        // not an open of its own); any other object gets a node of its own in that file.
        if ty == b::H5I_FILE {
            if let Some(f) = &w.file {
                return Ok(VolObj::into_raw(under, w.vol.clone(), Some(f.clone())));
            }
        }
        let file_name = w
            .file
            .as_ref()
            .map_or_else(|| Arc::from(""), |f| f.file_name.clone());
        let (node, _) = tree::lookup_or_insert(
            tree::unique_key(),
            NewNode {
                kind: query::kind_of(ty),
                file: w.file.clone(),
                file_name,
                path: "",
                anonymous: false,
            },
        );
        node.stats.lock().opens += 1; // not an open of the file's datasets or groups
        Ok(VolObj::into_raw(under, w.vol.clone(), Some(node)))
    })
}

pub unsafe extern "C" fn unwrap_object(obj: *mut c_void) -> *mut c_void {
    guard(std::ptr::null_mut(), Op::UnwrapObject, || {
        // SAFETY: HDF5 passes a non-null object: ours, or the library's own.
        if !obj.is_null() && !unsafe { VolObj::is_ours(obj) } {
            // HDF5 wrapped it at h5prov's level with a NULL context, which passes it
            // through (vol-async over h5prov, see `VolObj`): nothing of ours to take off.
            return Ok(obj);
        }
        // SAFETY: our wrapper.
        let o = unsafe { VolObj::from_ptr(obj) }?;
        // SAFETY: forwarded.
        let under = unsafe { b::H5VLunwrap_object(o.under, o.vol.id()) };
        if !under.is_null() {
            // SAFETY: HDF5 no longer uses the wrapper once unwrapped.
            unsafe { VolObj::free(obj) };
        }
        Ok(under)
    })
}

pub unsafe extern "C" fn free_wrap_ctx(ctx: *mut c_void) -> herr_t {
    guard(-1, Op::WrapFreeCtx, || {
        if ctx.is_null() {
            return Ok(0);
        }
        // SAFETY: a WrapCtx we boxed, freed once.
        let mut w = unsafe { Box::from_raw(ctx.cast::<WrapCtx>()) };
        if let Some(f) = w.file.take() {
            crate::ffi::release(f);
        }
        if !w.under_ctx.is_null() {
            let (c, v) = (w.under_ctx, w.vol.id());
            // SAFETY: forwarded.
            quietly(|| unsafe { b::H5VLfree_wrap_ctx(c, v) });
        }
        Ok(0)
    })
}

//! Wrapping: the `wrap_cls` callbacks, for objects HDF5 wraps outside h5prov's callbacks
//! (`get_object`, the wrap context, `wrap_object`, `unwrap_object`), and [`iterating`],
//! which tells `wrap_object` what the callback in flight iterates over.

use crate::ffi::query::{self, quietly};
use crate::ffi::{guard, UnderVol, VolObj};
use crate::ops::Op;
use crate::tree::{self, Key, Kind, NewNode, Node};
use h5prov_bindings as b;
use h5prov_bindings::*;
use std::cell::RefCell;
use std::ffi::c_void;
use std::sync::Arc;

/// The object an iteration or visit in flight on this thread works at: the location
/// object's node and the callback's location parameters.
///
/// HDF5 opens that object itself, inside the under connector's call, and registers it
/// through `wrap_object` to hand the application's callback an id (`H5Aiterate2`,
/// `H5Aiterate_by_name`: `H5A__iterate`; `H5Literate2`, `H5Lvisit2` and their `_by_name`
/// forms: `H5G_iterate`, `H5G_visit`; `H5Ovisit3`: `H5O__visit`, which registers the
/// object and then, for a group, `H5G_visit` registers it again). The wrap context says
/// only which file it is in; this says which object.
struct Iterating {
    at: Arc<Node>,
    loc: *const H5VL_loc_params_t,
    /// [`tree::names_generation`] before the under call.
    generation: u64,
    /// The node the call's first wrapped object got: a later one of the same kind is the
    /// same object (`H5O__visit`); one of another kind is not (a committed datatype the
    /// application's callback asked for).
    named: Option<Arc<Node>>,
}

thread_local! {
    /// Set by [`iterating`] for the length of its call.
    static ITERATING: RefCell<Option<Iterating>> = const { RefCell::new(None) };
}

/// Whether sub-operation `sub` of the `specific` callback `op` is an iteration or visit
/// that registers the object it works at (see [`Iterating`]).
fn iterates(op: Op, sub: u32) -> bool {
    use h5prov_bindings::abi::common as c;
    match op {
        Op::AttrSpecific => sub == c::H5VL_ATTR_ITER,
        Op::LinkSpecific => sub == c::H5VL_LINK_ITER,
        Op::ObjectSpecific => sub == c::H5VL_OBJECT_VISIT,
        _ => false,
    }
}

/// Runs `call`, the under connector's call of the `specific` callback `op` with
/// sub-operation `sub` on wrapper `obj` at `loc`: for an iteration or visit, with what it
/// works at left for `wrap_object` ([`Iterating`]), so that the object HDF5 opens for it
/// is filed under its own node or path, not under an empty one. Any other call runs as is.
/// An iteration inside the application's callback sets its own, and the outer one's is
/// put back after it.
///
/// # Safety
/// `obj` is a live wrapper of ours; `loc` is null or valid for the length of `call`.
pub unsafe fn iterating<R>(
    op: Op,
    sub: u32,
    obj: *mut c_void,
    loc: *const H5VL_loc_params_t,
    call: impl FnOnce() -> R,
) -> R {
    if !iterates(op, sub) {
        return call();
    }
    // SAFETY: per the contract.
    let at = unsafe { VolObj::from_ptr(obj) }
        .ok()
        .and_then(|o| o.node.clone());
    let Some(at) = at else {
        return call();
    };
    /// Puts back what was set before, also if `call` unwinds; this call's nodes are let go
    /// through the close path (the wrapped object's last handle may have closed already).
    struct Restore(Option<Iterating>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let before = self.0.take();
            let mine = ITERATING
                .try_with(|t| std::mem::replace(&mut *t.borrow_mut(), before))
                .ok()
                .flatten();
            if let Some(it) = mine {
                crate::ffi::release(it.at);
                if let Some(n) = it.named {
                    crate::ffi::release(n);
                }
            }
        }
    }
    let now = Iterating {
        at,
        loc,
        generation: tree::names_generation(),
        named: None,
    };
    let before = ITERATING
        .try_with(|t| t.borrow_mut().replace(now))
        .ok()
        .flatten();
    let _restore = Restore(before);
    call()
}

/// The node for an object of `kind` that HDF5 registers inside an iteration or visit in
/// flight ([`Iterating`]), in the wrap context's file: the location object's own node when
/// the iteration is at that object itself; else the object at the location's path joined
/// with the location's name, found by a name an earlier open resolved, or a node of its
/// own with that path. `None`: no iteration in flight, its object is in another file, or
/// the call wrapped an object of another kind first.
fn iterated(w: &WrapCtx, kind: Kind) -> Option<Arc<Node>> {
    ITERATING
        .try_with(|t| {
            let mut t = t.try_borrow_mut().ok()?;
            let it = t.as_mut()?;
            if let Some(n) = &it.named {
                return (n.kind == kind).then(|| n.clone());
            }
            let node = iterated_first(it, w, kind)?;
            it.named = Some(node.clone());
            Some(node)
        })
        .ok()
        .flatten()
}

/// [`iterated`] for the first object the call wraps.
fn iterated_first(it: &Iterating, w: &WrapCtx, kind: Kind) -> Option<Arc<Node>> {
    let at = &it.at;
    let at_file = if at.kind == Kind::File {
        Some(at)
    } else {
        at.file.as_ref()
    };
    let file = w.file.as_ref()?;
    if !at_file.is_some_and(|f| Arc::ptr_eq(f, file)) {
        return None;
    }
    // SAFETY: the location parameters of the call in flight (see `iterating`).
    let name = unsafe { query::opened_name(std::ptr::null(), it.loc) };
    let itself = name.is_empty() || name == ".";
    if itself && at.kind == kind {
        return Some(at.clone());
    }
    let parent = if at.kind == Kind::File {
        "/"
    } else {
        at.path()
    };
    let path = tree::join_path(parent, &name);
    let remembered = match &at.key {
        Key::File(_) | Key::Object(..) if !itself => {
            tree::resolved_name(it.generation, &at.key, &name)
        }
        _ => None,
    };
    let key = match remembered {
        Some((fileno, token)) if file.key == Key::File(fileno) => Key::Object(fileno, token),
        _ => tree::unique_key(),
    };
    let (node, _) = tree::lookup_or_insert(
        key,
        NewNode {
            kind,
            file: Some(file.clone()),
            file_name: file.file_name.clone(),
            path: &path,
            anonymous: false,
        },
    );
    Some(node)
}

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
        // not an open of its own). Any other object is the one an iteration in flight works
        // at (`iterated`), or gets a node of its own in that file, with no path.
        if ty == b::H5I_FILE {
            if let Some(f) = &w.file {
                return Ok(VolObj::into_raw(under, w.vol.clone(), Some(f.clone())));
            }
        }
        // Not counted as an open, of the object or of its file's datasets or groups: the
        // application opened nothing.
        let kind = query::kind_of(ty);
        let node = iterated(w, kind).unwrap_or_else(|| {
            let file_name = w
                .file
                .as_ref()
                .map_or_else(|| Arc::from(""), |f| f.file_name.clone());
            let new = NewNode {
                kind,
                file: w.file.clone(),
                file_name,
                path: "",
                anonymous: false,
            };
            tree::lookup_or_insert(tree::unique_key(), new).0
        });
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

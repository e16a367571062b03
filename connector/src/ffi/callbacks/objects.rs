//! Callbacks whose arguments carry other objects, unwrapped before they go to the under
//! connector (hard-link `curr_obj`, mount `child_file`, link copy/move source and
//! destination, object copy), and `object_open` and `generic_optional`.

use super::{Req, NONE};
use crate::ffi::query;
use crate::ffi::{cstr, guard, shape_call, sub_of, wrap_req, Error, Opening, VolObj};
use crate::ops::Op;
use crate::trace::{Event, Span};
use crate::tree::{self, Kind, Node};
use h5prov_bindings as b;
use h5prov_bindings::*;
use std::ffi::{c_char, c_void};
use std::marker::PhantomData;

pub unsafe extern "C" fn group_specific(
    obj: *mut c_void,
    args: *mut H5VL_group_specific_args_t,
    dxpl: hid_t,
    req: Req,
) -> herr_t {
    guard(-1, Op::GroupSpecific, || {
        let sub = sub_of!(args);
        // SAFETY: forwarded; the mounted child file is unwrapped into a private copy of args.
        unsafe {
            shape_call(Op::GroupSpecific, sub, obj, req, |o, v| {
                match args.as_ref() {
                    Some(a) if a.op_type == b::H5VL_GROUP_MOUNT => {
                        let mut my = *a;
                        let child = a.args.mount.child_file;
                        if let Ok(c) = VolObj::from_ptr(child) {
                            my.args.mount.child_file = c.under;
                        }
                        b::H5VLgroup_specific(o, v, &mut my, dxpl, req)
                    }
                    _ => b::H5VLgroup_specific(o, v, args, dxpl, req),
                }
            })
        }
    })
}

/// The under object and connector of a possibly-NULL wrapper.
unsafe fn under_of<'a>(p: *mut c_void) -> (Option<&'a VolObj>, *mut c_void) {
    // SAFETY: p is null or our wrapper.
    match unsafe { VolObj::from_ptr(p) } {
        Ok(o) => (Some(o), o.under),
        Err(_) => (None, std::ptr::null_mut()),
    }
}

fn record_simple(span: &mut Span, node: Option<&Node>, r: herr_t, path: Option<&str>) {
    span.finish(&Event {
        node,
        status: r,
        path,
        ..Event::default()
    });
}

pub unsafe extern "C" fn link_create(
    args: *mut H5VL_link_create_args_t,
    obj: *mut c_void,
    loc: *const H5VL_loc_params_t,
    lcpl: hid_t,
    lapl: hid_t,
    dxpl: hid_t,
    req: Req,
) -> herr_t {
    guard(-1, Op::LinkCreate, || {
        let sub = sub_of!(args);
        // SAFETY: obj is null or our wrapper; args valid.
        let (o, under) = unsafe { under_of(obj) };
        let a = unsafe { args.as_mut() }.ok_or("NULL arguments")?;
        let mut vol = o.map(|o| &o.vol);
        // The object a hard link goes to, when it is the object passed in itself (`H5Olink`;
        // `H5Lcreate_hard(obj, ".", ...)`): an anonymous one gets its name from the link.
        let mut target = None;
        if a.op_type == b::H5VL_LINK_CREATE_HARD {
            // SAFETY: the hard member; curr_obj is null or our wrapper.
            unsafe {
                let (c, cu) = under_of(a.args.hard.curr_obj);
                if let Some(c) = c {
                    vol = vol.or(Some(&c.vol));
                    a.args.hard.curr_obj = cu;
                    if query::is_itself(&a.args.hard.curr_loc_params) {
                        target = c.node.as_deref();
                    }
                }
            }
        }
        let vol = vol.ok_or("no object to find the under connector from")?;
        let mut span = Span::begin(Op::LinkCreate, sub);
        // SAFETY: forwarded with unwrapped objects.
        let r = unsafe { b::H5VLlink_create(a, under, loc, vol.id(), lcpl, lapl, dxpl, req) };
        span.under_end();
        // SAFETY: req per the VOL contract.
        span.set_in_flight(unsafe { wrap_req(req, vol, Op::LinkCreate, span.start()) });
        // SAFETY: loc valid or null.
        let name = unsafe { query::opened_name(std::ptr::null(), loc) };
        let location = o.and_then(|o| o.node.as_deref());
        let named = target
            .filter(|_| r >= 0 && !name.is_empty())
            .and_then(|t| name_anonymous(t, location, &name).map(|label| (t, label)));
        match named {
            // The record is the named object's, under its new path; `anon` carries the
            // label of its earlier records.
            Some((t, label)) => span.finish(&Event {
                node: Some(t),
                status: r,
                anon: label,
                ..Event::default()
            }),
            None => record_simple(&mut span, location, r, Some(&name)),
        }
        Ok(r)
    })
}

/// Names the anonymous object `t` after a link `name` made at `location` (a file or group
/// node). Returns the label its earlier records
/// carry, or `None` when `t` is not anonymous, has a name already, or the link's path is
/// not known (a location without a path of its own).
fn name_anonymous<'t>(t: &'t Node, location: Option<&Node>, name: &str) -> Option<&'t str> {
    let parent = match location {
        Some(l) if l.kind == Kind::File => "/",
        Some(l) => l.path(),
        None => return None,
    };
    let path = tree::join_path(parent, name);
    if !path.starts_with('/') {
        return None;
    }
    t.name_anonymous(&path)
}

unsafe fn link_copy_move(
    op: Op,
    src: *mut c_void,
    loc1: *const H5VL_loc_params_t,
    dst: *mut c_void,
    loc2: *const H5VL_loc_params_t,
    req: Req,
    call: impl FnOnce(*mut c_void, *mut c_void, hid_t) -> herr_t,
) -> Result<herr_t, Error> {
    // SAFETY: null or our wrappers.
    let ((s, su), (d, du)) = unsafe { (under_of(src), under_of(dst)) };
    let vol = s
        .or(d)
        .map(|o| &o.vol)
        .ok_or("no object to find the under connector from")?;
    let mut span = Span::begin(op, NONE);
    let r = call(su, du, vol.id());
    span.under_end();
    // SAFETY: req per the VOL contract.
    span.set_in_flight(unsafe { wrap_req(req, vol, op, span.start()) });
    // SAFETY: loc valid or null.
    let name = unsafe { query::opened_name(std::ptr::null(), loc1) };
    let _ = loc2;
    record_simple(
        &mut span,
        s.or(d).and_then(|o| o.node.as_deref()),
        r,
        Some(&name),
    );
    if r >= 0 && op == Op::LinkMove {
        // A renamed object's parked node has its old path.
        for n in [s, d]
            .into_iter()
            .flatten()
            .filter_map(|o| o.node.as_deref())
        {
            crate::ffi::drain_parked(n);
        }
    }
    Ok(r)
}

#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn link_copy(
    src: *mut c_void,
    loc1: *const H5VL_loc_params_t,
    dst: *mut c_void,
    loc2: *const H5VL_loc_params_t,
    lcpl: hid_t,
    lapl: hid_t,
    dxpl: hid_t,
    req: Req,
) -> herr_t {
    guard(-1, Op::LinkCopy, || {
        // SAFETY: forwarded.
        unsafe {
            link_copy_move(Op::LinkCopy, src, loc1, dst, loc2, req, |s, d, v| {
                b::H5VLlink_copy(s, loc1, d, loc2, v, lcpl, lapl, dxpl, req)
            })
        }
    })
}

#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn link_move(
    src: *mut c_void,
    loc1: *const H5VL_loc_params_t,
    dst: *mut c_void,
    loc2: *const H5VL_loc_params_t,
    lcpl: hid_t,
    lapl: hid_t,
    dxpl: hid_t,
    req: Req,
) -> herr_t {
    guard(-1, Op::LinkMove, || {
        // SAFETY: forwarded.
        unsafe {
            link_copy_move(Op::LinkMove, src, loc1, dst, loc2, req, |s, d, v| {
                b::H5VLlink_move(s, loc1, d, loc2, v, lcpl, lapl, dxpl, req)
            })
        }
    })
}

pub unsafe extern "C" fn object_open(
    obj: *mut c_void,
    loc: *const H5VL_loc_params_t,
    opened_type: *mut H5I_type_t,
    dxpl: hid_t,
    req: Req,
) -> *mut c_void {
    guard(std::ptr::null_mut(), Op::ObjectOpen, || {
        // SAFETY: our wrapper.
        let o = unsafe { VolObj::from_ptr(obj) }?;
        let mut span = Span::begin(Op::ObjectOpen, NONE);
        let generation = crate::tree::names_generation();
        // SAFETY: forwarded.
        let under = unsafe { b::H5VLobject_open(o.under, loc, o.vol.id(), opened_type, dxpl, req) };
        span.under_end();
        if under.is_null() {
            record_simple(&mut span, o.node.as_deref(), -1, None);
            return Ok(std::ptr::null_mut());
        }
        // SAFETY: opened_type was filled in by the under connector.
        let kind = query::kind_of(unsafe { opened_type.as_ref() }.copied().unwrap_or(-1));
        let open = Opening {
            kind,
            name: std::ptr::null(),
            loc,
            dxpl,
            created: false,
            dataset: None,
            dapl: -1,
            _p: PhantomData,
        };
        // SAFETY: req per the VOL contract.
        let pending = unsafe { crate::ffi::request_returned(req) };
        // SAFETY: under is the new object; loc valid.
        let node = unsafe { query::attach(o, under, &open, pending, generation) };
        // SAFETY: req per the VOL contract.
        span.set_in_flight(unsafe { wrap_req(req, &o.vol, Op::ObjectOpen, span.start()) });
        record_simple(&mut span, Some(&node), 0, None);
        Ok(VolObj::into_raw(under, o.vol.clone(), Some(node)))
    })
}

#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn object_copy(
    src: *mut c_void,
    src_loc: *const H5VL_loc_params_t,
    src_name: *const c_char,
    dst: *mut c_void,
    dst_loc: *const H5VL_loc_params_t,
    dst_name: *const c_char,
    ocpypl: hid_t,
    lcpl: hid_t,
    dxpl: hid_t,
    req: Req,
) -> herr_t {
    guard(-1, Op::ObjectCopy, || {
        // SAFETY: our wrappers.
        let (s, d) = unsafe { (VolObj::from_ptr(src)?, VolObj::from_ptr(dst)?) };
        let mut span = Span::begin(Op::ObjectCopy, NONE);
        // SAFETY: forwarded with unwrapped objects.
        let r = unsafe {
            b::H5VLobject_copy(
                s.under,
                src_loc,
                src_name,
                d.under,
                dst_loc,
                dst_name,
                s.vol.id(),
                ocpypl,
                lcpl,
                dxpl,
                req,
            )
        };
        span.under_end();
        // SAFETY: req per the VOL contract.
        span.set_in_flight(unsafe { wrap_req(req, &s.vol, Op::ObjectCopy, span.start()) });
        // SAFETY: C string from HDF5.
        let name = unsafe { cstr(src_name) };
        record_simple(&mut span, s.node.as_deref(), r, Some(&name));
        if r >= 0 {
            // The copy took file space in the destination, which may be a deleted
            // object's: a parked node with that token must not be found for it.
            if let Some(n) = d.node.as_deref() {
                crate::ffi::drain_parked(n);
            }
        }
        Ok(r)
    })
}

pub unsafe extern "C" fn generic_optional(
    obj: *mut c_void,
    args: *mut H5VL_optional_args_t,
    dxpl: hid_t,
    req: Req,
) -> herr_t {
    guard(-1, Op::GenericOptional, || {
        let sub = sub_of!(args);
        // SAFETY: forwarded.
        unsafe {
            shape_call(Op::GenericOptional, sub, obj, req, |o, v| {
                b::H5VLoptional(o, v, args, dxpl, req)
            })
        }
    })
}

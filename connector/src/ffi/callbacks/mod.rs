//! The callbacks with special logic, following HDF5's `src/H5VLpassthru.c`:
//! connector life cycle, info and wrap callbacks, file create/open/specific/close (the FAPL's
//! VOL is swapped for the under connector's), data I/O (bytes and selections recorded),
//! callbacks whose arguments carry other objects (unwrapped), introspection, and requests.

mod data_io;
mod file;
mod info;
mod lifecycle;
mod wrap;

pub use data_io::{attr_read, attr_write, dataset_read, dataset_specific, dataset_write};
pub use file::{file_close, file_create, file_open, file_specific};
pub use info::{info_cmp, info_copy, info_free, info_from_str, info_to_str, Info, InfoData};
pub use lifecycle::{get_cap_flags, get_conn_cls, initialize, terminate};
pub use wrap::{free_wrap_ctx, get_object, get_wrap_ctx, unwrap_object, wrap_object};

use super::query;
use super::{cstr, guard, shape_call, sub_of, wrap_req, Error, Opening, VolObj};
use crate::ops::Op;
use crate::trace::{self, Event, Span};
use crate::tree::{self, Kind, Node};
use h5prov_bindings as b;
use h5prov_bindings::*;
use std::ffi::{c_char, c_void};
use std::marker::PhantomData;

const NONE: u32 = crate::subops::NONE;
type Req = *mut *mut c_void;

// ---------------------------------------------------------------------------------------
// Callbacks whose arguments carry other objects

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
                    if links_to_itself(&a.args.hard.curr_loc_params) {
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

/// Whether a hard link's current-object location is that object itself: by self, or by
/// the name `.` (`H5Lcreate_hard` names the object it is given as `cur_loc` so).
///
/// # Safety
/// `l` is HDF5's location parameters: a by-name location holds a valid name or NULL.
unsafe fn links_to_itself(l: &H5VL_loc_params_t) -> bool {
    match l.type_ {
        b::H5VL_OBJECT_BY_SELF => true,
        b::H5VL_OBJECT_BY_NAME => {
            // SAFETY: the by-name member is the active one; its name is valid or NULL.
            let name = unsafe { cstr(l.loc_data.loc_by_name.name) };
            name == "."
        }
        _ => false,
    }
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
            super::drain_parked(n);
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
        let pending = unsafe { super::request_returned(req) };
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
                super::drain_parked(n);
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

// ---------------------------------------------------------------------------------------
// Requests. The wrapper is freed exactly once, in `request_free`: HDF5's event set calls
// it on every request, completed or not (`H5ES__event_free`, `H5ESevent.c`), after the
// wait, cancel or notify that saw it complete. (HDF5's own pass_through template also frees
// in `wait`, `cancel` and `notify`: the event set's `request_free` then touches freed memory.)

/// `req_done` of a request whose `wait`/`cancel` returned `r` and `status`: 1 succeeded,
/// 2 failed, 3 canceled; 0 while in progress (or when the connector cannot cancel a running
/// operation), on a failed call, or without a status.
///
/// # Safety
/// `status` is null or valid.
unsafe fn final_status(r: herr_t, status: *const H5VL_request_status_t) -> u8 {
    if r < 0 {
        return 0;
    }
    // SAFETY: per the contract.
    match unsafe { status.as_ref() }.copied() {
        Some(b::H5VL_REQUEST_STATUS_SUCCEED) => 1,
        Some(b::H5VL_REQUEST_STATUS_FAIL) => 2,
        Some(b::H5VL_REQUEST_STATUS_CANCELED) => 3,
        _ => 0,
    }
}

/// A `request.*` callback. `status`: the out-pointer of `wait`/`cancel` (null for the
/// others), read after the call to mark the first callback that saw the request finished:
/// that row's end is when the completion was observed (an upper bound of it).
unsafe fn request_end(
    op: Op,
    req: *mut c_void,
    call: impl FnOnce(*mut c_void, hid_t) -> herr_t,
    status: *const H5VL_request_status_t,
    free: bool,
) -> Result<herr_t, Error> {
    // SAFETY: our request wrapper.
    let o = unsafe { VolObj::from_ptr(req) }?;
    let origin = o.req_op;
    let mut span = Span::begin(op, NONE);
    if let Some(origin) = origin {
        span.record_with(origin);
    }
    let r = call(o.under, o.vol.id());
    span.under_end();
    // SAFETY: status is null or the callback's valid out-pointer.
    let done = match unsafe { final_status(r, status) } {
        0 => 0,
        d if !o.req_done.swap(true, std::sync::atomic::Ordering::Relaxed) => d,
        _ => 0,
    };
    // The execution time, once the operation succeeded (a query that would wait is never
    // made: the request has finished). An answer longer than the observed completion
    // (from the issuing call's start to now) is impossible and dropped: vol-async 1.8.1
    // sets a task's end time after marking it done (its dataset create, for one), so a
    // wait that sees it done early gets 0 − start, wrapped around.
    let exec_ns = if done == 1 && span.active() && o.req_t0 != 0 {
        // SAFETY: o.under is the live, finished request of connector o.vol.
        let ns = unsafe { super::query::request_exec_ns(o.under, o.vol.id()) };
        let bound = crate::clock::ns_between(o.req_t0, crate::clock::now());
        if ns <= bound {
            ns
        } else {
            0
        }
    } else {
        0
    };
    if done != 0 {
        // A file create or open finished: its description, left for now.
        if let Some(n) = &o.node {
            n.describe_deferred();
        }
    }
    span.set_request(o.req_id, done, exec_ns);
    // The request of a file close left in flight holds the file's node (`shape_close`): the
    // close's deferred work is done when the request goes, off the close's issue path.
    let closed_file = free && r >= 0 && origin == Some(Op::FileClose) && o.node.is_some();
    if closed_file {
        if let Some(n) = &o.node {
            // The objects parked in the file go first: their rows, then the file's (when
            // the free below lets go of its last holder).
            super::drain_parked(n);
        }
    }
    if free && r >= 0 {
        // SAFETY: HDF5 frees a request once and does not use it afterwards.
        unsafe { VolObj::free(req) };
    }
    span.finish(&Event {
        kind: Kind::Request,
        status: r,
        detail: origin.map_or("", |o| o.name()),
        ..Event::default()
    });
    if closed_file {
        // A guard of its own whose failure value is the free's status: the request is gone.
        return Ok(guard(r, Op::RequestFree, || {
            trace::flush();
            Ok(r)
        }));
    }
    Ok(r)
}

pub unsafe extern "C" fn request_wait(
    req: *mut c_void,
    timeout: u64,
    status: *mut H5VL_request_status_t,
) -> herr_t {
    guard(-1, Op::RequestWait, || {
        // SAFETY: forwarded; status is a valid out-pointer.
        unsafe {
            request_end(
                Op::RequestWait,
                req,
                |o, v| b::H5VLrequest_wait(o, v, timeout, status),
                status,
                false,
            )
        }
    })
}

pub unsafe extern "C" fn request_notify(
    req: *mut c_void,
    cb: H5VL_request_notify_t,
    ctx: *mut c_void,
) -> herr_t {
    guard(-1, Op::RequestNotify, || {
        // SAFETY: forwarded.
        unsafe {
            request_end(
                Op::RequestNotify,
                req,
                |o, v| b::H5VLrequest_notify(o, v, cb, ctx),
                std::ptr::null(),
                false,
            )
        }
    })
}

pub unsafe extern "C" fn request_cancel(
    req: *mut c_void,
    status: *mut H5VL_request_status_t,
) -> herr_t {
    guard(-1, Op::RequestCancel, || {
        // SAFETY: forwarded.
        unsafe {
            request_end(
                Op::RequestCancel,
                req,
                |o, v| b::H5VLrequest_cancel(o, v, status),
                status,
                false,
            )
        }
    })
}

pub unsafe extern "C" fn request_free(req: *mut c_void) -> herr_t {
    guard(-1, Op::RequestFree, || {
        // SAFETY: forwarded.
        unsafe {
            request_end(
                Op::RequestFree,
                req,
                |o, v| b::H5VLrequest_free(o, v),
                std::ptr::null(),
                true,
            )
        }
    })
}

//! Requests. The wrapper is freed exactly once, in `request_free`: HDF5's event set calls
//! it on every request, completed or not (`H5ES__event_free`, `H5ESevent.c`), after the
//! wait, cancel or notify that saw it complete. (HDF5's own pass_through template also frees
//! in `wait`, `cancel` and `notify`: the event set's `request_free` then touches freed memory.)

use super::NONE;
use crate::ffi::{guard, Error, VolObj};
use crate::ops::Op;
use crate::trace::{self, Event, Span};
use crate::tree::Kind;
use h5prov_bindings as b;
use h5prov_bindings::*;
use std::ffi::c_void;

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
        let ns = unsafe { crate::ffi::query::request_exec_ns(o.under, o.vol.id()) };
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
            crate::ffi::drain_parked(n);
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

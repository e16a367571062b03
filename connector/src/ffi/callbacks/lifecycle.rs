//! Life cycle and introspection: the connector's `initialize` and `terminate`, and the
//! introspection callbacks (`get_conn_cls` answers with h5prov's class, `get_cap_flags`
//! ORs h5prov's flags into the under connector's).

use super::Info;
use crate::ffi::{guard, VolObj};
use crate::ops::Op;
use crate::trace;
use crate::tree;
use h5prov_bindings as b;
use h5prov_bindings::*;
use std::ffi::c_void;

pub unsafe extern "C" fn initialize(_vipl: hid_t) -> herr_t {
    guard(-1, Op::Initialize, || {
        crate::ffi::error::register();
        crate::ffi::error::load_test_hook();
        crate::trace::register_fork_handlers();
        // The clock's first calibration (a 0.25 ms measurement, once per process) belongs
        // to loading the connector, not to the application's first file open, which would
        // otherwise pay it inside the program's own timed work.
        crate::clock::init();
        Ok(0)
    })
}

pub unsafe extern "C" fn terminate() -> herr_t {
    guard(-1, Op::Terminate, || {
        trace::finish();
        if std::env::var_os("H5PROV_CHECK_LEAKS").is_some() {
            eprintln!(
                "h5prov: live state nodes at terminate: {}; released outside the close path: {}",
                tree::live_nodes(),
                tree::unreleased_nodes()
            );
        }
        crate::ffi::error::unregister();
        Ok(0)
    })
}

pub unsafe extern "C" fn get_conn_cls(
    obj: *mut c_void,
    lvl: H5VL_get_conn_lvl_t,
    cls: *mut *const H5VL_class_t,
) -> herr_t {
    guard(-1, Op::IntrospectGetConnCls, || {
        if lvl == b::H5VL_GET_CONN_LVL_CURR {
            // SAFETY: valid out-pointer; our class has a stable address.
            unsafe { *cls = crate::ffi::plugin::class_ptr() };
            return Ok(0);
        }
        // SAFETY: obj is our wrapper.
        let o = unsafe { VolObj::from_ptr(obj) }?;
        // SAFETY: forwarded.
        Ok(unsafe { b::H5VLintrospect_get_conn_cls(o.under, o.vol.id(), lvl, cls) })
    })
}

pub unsafe extern "C" fn get_cap_flags(info: *const c_void, flags: *mut u64) -> herr_t {
    guard(-1, Op::IntrospectGetCapFlags, || {
        // SAFETY: an Info of ours (HDF5 passes the connector's info).
        let i = unsafe { info.cast::<Info>().as_ref() }.ok_or("NULL info (no under connector)")?;
        // SAFETY: forwarded to the under connector.
        let r = unsafe { b::H5VLintrospect_get_cap_flags(i.under_info, i.under.id(), flags) };
        if r >= 0 {
            // SAFETY: valid out-pointer.
            unsafe { *flags |= (*crate::ffi::plugin::class_ptr()).cap_flags };
        }
        Ok(r)
    })
}

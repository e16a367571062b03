//! h5prov's own HDF5 error class, and the one place errors are reported.

use crate::ops::Op;
use h5prov_bindings as b;
use h5prov_bindings::hid_t;
use parking_lot::Mutex;
use std::ffi::CString;
use std::sync::atomic::{AtomicU32, Ordering};

/// Registered error class and its messages: (class, major, minor).
static IDS: Mutex<Option<(hid_t, hid_t, hid_t)>> = Mutex::new(None);

/// Registers h5prov's error class (connector `initialize`). Idempotent.
pub fn register() {
    let mut ids = IDS.lock();
    if ids.is_some() {
        return;
    }
    let name = c"h5prov";
    let lib = c"h5prov VOL connector";
    let ver = CString::new(env!("CARGO_PKG_VERSION")).unwrap_or_default();
    // SAFETY: valid NUL-terminated strings; HDF5 copies them.
    unsafe {
        let cls = b::H5Eregister_class(name.as_ptr(), lib.as_ptr(), ver.as_ptr());
        if cls < 0 {
            return;
        }
        let maj = b::H5Ecreate_msg(cls, b::H5E_MAJOR, c"h5prov connector".as_ptr());
        let min = b::H5Ecreate_msg(cls, b::H5E_MINOR, c"callback failed".as_ptr());
        *ids = Some((cls, maj, min));
    }
}

/// Unregisters the error class (connector `terminate`).
pub fn unregister() {
    if let Some((cls, maj, min)) = IDS.lock().take() {
        // SAFETY: ids we registered.
        unsafe {
            b::H5Eclose_msg(maj);
            b::H5Eclose_msg(min);
            b::H5Eunregister_class(cls);
        }
    }
}

/// Pushes one error record naming the operation and the problem. Never fails.
#[cold]
pub fn push(op: Op, msg: &str) {
    let text = CString::new(format!("h5prov: {}: {msg}", op.name()).replace('\0', " "))
        .unwrap_or_default();
    // Not bound (HDF5 never loaded us): there is no error stack to push to.
    let Some(bound) = b::loader::bound() else {
        return;
    };
    let api = &bound.api;
    let ids = *IDS.lock();
    // SAFETY: valid strings; "%s" consumes exactly one string argument; the globals are
    // HDF5's error class and message ids (initialised: HDF5 is calling us).
    unsafe {
        let (cls, maj, min) = match ids {
            Some(ids) => ids,
            None => (*api.H5E_ERR_CLS_g, *api.H5E_VOL_g, *api.H5E_CANTOPERATE_g),
        };
        (api.H5Epush2)(
            0, // H5E_DEFAULT
            c"h5prov".as_ptr(),
            c"h5prov".as_ptr(),
            0,
            cls,
            maj,
            min,
            c"%s".as_ptr(),
            text.as_ptr(),
        );
    }
}

/// Test-only hook: `H5PROV_TEST_PANIC=<op name>` (read at `initialize`) makes that
/// callback panic inside the guard, before the under call, to prove the application gets an
/// HDF5 error. `H5PROV_TEST_PANIC=<op name>:after` panics in h5prov's own work after the
/// under call instead (see [`maybe_test_panic_after`]).
static TEST_PANIC: AtomicU32 = AtomicU32::new(u32::MAX);
static TEST_PANIC_AFTER: AtomicU32 = AtomicU32::new(u32::MAX);

/// Reads `H5PROV_TEST_PANIC`.
pub fn load_test_hook() {
    let v = std::env::var("H5PROV_TEST_PANIC").unwrap_or_default();
    let (name, after) = match v.strip_suffix(":after") {
        Some(name) => (name, true),
        None => (v.as_str(), false),
    };
    let idx = Op::ALL
        .iter()
        .position(|o| o.name() == name)
        .map_or(u32::MAX, |i| i as u32);
    let (set, clear) = if after {
        (&TEST_PANIC_AFTER, &TEST_PANIC)
    } else {
        (&TEST_PANIC, &TEST_PANIC_AFTER)
    };
    set.store(idx, Ordering::Relaxed);
    clear.store(u32::MAX, Ordering::Relaxed);
}

fn hit(slot: &AtomicU32, op: Op) -> bool {
    let t = slot.load(Ordering::Relaxed);
    t != u32::MAX && Op::ALL.get(t as usize) == Some(&op)
}

#[inline]
pub fn maybe_test_panic(op: Op) {
    if hit(&TEST_PANIC, op) {
        panic!("H5PROV_TEST_PANIC forced a panic in {}", op.name());
    }
}

/// The `:after` hook, placed in the work a callback does after its under call.
#[inline]
pub fn maybe_test_panic_after(op: Op) {
    if hit(&TEST_PANIC_AFTER, op) {
        panic!("H5PROV_TEST_PANIC forced a panic after {}", op.name());
    }
}

//! The small FFI layer: everything `unsafe` in the connector lives under this module.
//!
//! - [`guard`]: the body of every `extern "C"` VOL callback is one call to it
//!   (`catch_unwind`; a panic or an internal error becomes one HDF5 error record with
//!   h5prov's own error class, and the callback returns `-1`/NULL). The plugin entry points
//!   and the `fork()` handlers, which run where there is no HDF5 error stack to report to,
//!   use [`guard_unwind`]. `connector/tests/guards.rs` checks every body.
//! - [`VolObj`]: the wrapper h5prov hands to HDF5 for every object. Created with
//!   `Box::into_raw` in [`VolObj::into_raw`]; freed with `Box::from_raw` only in
//!   [`VolObj::free`], which runs on a successful close, on `unwrap_object`, and for a
//!   request in `request_free` only (HDF5's event set calls it after any wait, cancel or
//!   notify).
//! - [`UnderVol`]: the under connector's id: one HDF5 reference (`H5Iinc_ref`/`H5Idec_ref`,
//!   with the error stack preserved) shared by all of h5prov's holders through an `Arc`.
//! - `table`: the declarative table of VOL callbacks; mechanical callbacks are generated
//!   from it, special ones are in `callbacks`.
#![deny(unsafe_op_in_unsafe_fn)]

pub mod callbacks;
pub mod error;
pub mod plugin;
pub mod query;
pub mod sys;
pub mod table;

use crate::ops::Op;
use crate::trace::{Event, Span};
use crate::tree::{Kind, Node};
use h5prov_bindings::{herr_t, hid_t, H5VL_loc_params_t};
use std::ffi::{c_char, c_void, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

/// An internal error; becomes one HDF5 error record.
#[derive(Debug)]
pub struct Error(pub String);

impl<T: Into<String>> From<T> for Error {
    fn from(s: T) -> Self {
        Error(s.into())
    }
}

/// Runs a callback body: a panic or `Err` is pushed on the HDF5 error stack with h5prov's
/// error class and `fail` is returned. Nothing unwinds into C.
#[inline]
pub fn guard<R>(fail: R, op: Op, f: impl FnOnce() -> Result<R, Error>) -> R {
    let renames = may_rename(op);
    if renames {
        crate::tree::names_changed();
    }
    let result = catch_unwind(AssertUnwindSafe(|| {
        error::maybe_test_panic(op);
        f()
    }));
    if renames {
        crate::tree::names_changed();
    }
    match result {
        Ok(Ok(v)) => v,
        Ok(Err(e)) => {
            error::push(op, &e.0);
            fail
        }
        Err(payload) => {
            let msg = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".to_string());
            error::push(op, &format!("internal error (panic): {msg}"));
            fail
        }
    }
}

/// [`guard`] for the `extern "C"` functions that have no HDF5 error stack to report to
/// (defined in [`sys`], the bottom layer, which the `fork()` handlers use).
pub use sys::guard_unwind;

/// The under connector's id. h5prov holds one HDF5 reference to it (`H5Iinc_ref` when
/// first taken, `H5Idec_ref` when the last holder goes) and counts its own holders (every
/// wrapper, wrap context, request and info) with an `Arc`: cloning is an atomic increment,
/// not three HDF5 API calls as a per-holder id reference would be (`H5Iinc_ref` and the
/// error-stack checks around it, on every open and every wrap context).
#[derive(Debug, Clone)]
pub struct UnderVol(Arc<UnderVolRef>);

/// The one HDF5 reference behind an [`UnderVol`], and the connector's value.
#[derive(Debug)]
pub struct UnderVolRef {
    id: hid_t,
    /// `H5VLget_value`'s answer, asked once; -1 when HDF5 could not say.
    value: h5prov_bindings::H5VL_class_value_t,
}

/// `H5_VOL_NATIVE` (`H5VLpublic.h`): the native connector's value.
const H5_VOL_NATIVE: h5prov_bindings::H5VL_class_value_t = 0;

impl UnderVol {
    /// Adopts an id whose HDF5 reference the caller owns.
    pub fn adopt(id: hid_t) -> UnderVol {
        let mut value = -1;
        // SAFETY: a plain query on a connector id, into a local. Public HDF5 calls clear
        // the error stack on entry, so it is preserved around the call.
        if query::quietly(|| unsafe { h5prov_bindings::H5VLget_value(id, &mut value) }) < 0 {
            value = -1;
        }
        UnderVol(Arc::new(UnderVolRef { id, value }))
    }

    /// The raw id.
    #[inline]
    pub fn id(&self) -> hid_t {
        self.0.id
    }

    /// The connector's value (`H5VL_class_value_t`), -1 when unknown.
    pub fn value(&self) -> h5prov_bindings::H5VL_class_value_t {
        self.0.value
    }

    /// Whether this is HDF5's native connector, which has no object wrapping (its class's
    /// `wrap_cls` callbacks are all NULL in `H5VLnative.c`, 1.14 and 2.x alike): its wrap
    /// context is always NULL, known without asking.
    #[inline]
    pub fn is_native(&self) -> bool {
        self.0.value == H5_VOL_NATIVE
    }
}

impl Drop for UnderVolRef {
    fn drop(&mut self) {
        let id = self.id;
        // The error stack is preserved so a failed decrement (e.g. after H5close) never
        // pollutes or clears the application's stack.
        // SAFETY: a plain HDF5 call on an id.
        query::quietly(|| unsafe { h5prov_bindings::H5Idec_ref(id) });
    }
}

/// The object h5prov hands to HDF5 in place of the under connector's object.
///
/// It starts with [`VolObj::MAGIC`], cleared when it is freed: HDF5 calls `unwrap_object`
/// and `get_object` on objects that h5prov never wrapped. When a connector above h5prov
/// (vol-async) has no object of ours yet to take a wrap context from, because the create
/// that returns it is still in flight, HDF5 wraps the library's object at h5prov's level with
/// a NULL context, which passes it through unwrapped (`H5VL_wrap_object`), but later always
/// calls h5prov's `unwrap_object` on it (`H5F__dest`, on vol-async's background thread).
/// Such a pointer is the library's own object, at least 8 bytes long.
#[repr(C)]
pub struct VolObj {
    /// [`VolObj::MAGIC`] while alive.
    pub magic: u64,
    /// The under connector's object.
    pub under: *mut c_void,
    /// The under connector.
    pub vol: UnderVol,
    /// Shared state node (for requests: the file of an asynchronous file create or open,
    /// held until the request is freed; none for the others).
    pub node: Option<Arc<Node>>,
    /// For requests: the operation that created it.
    pub req_op: Option<Op>,
    /// For requests: the request id of the trace (`req` column), else 0.
    pub req_id: u64,
    /// For requests: a `wait` or `cancel` has seen the request finished.
    pub req_done: std::sync::atomic::AtomicBool,
    /// For requests: when the call that issued it started (0: not timed).
    pub req_t0: crate::clock::Tick,
}

impl VolObj {
    /// The first field of a live wrapper ("h5provOB").
    pub const MAGIC: u64 = u64::from_le_bytes(*b"h5provOB");

    /// Boxes a wrapper and returns the pointer HDF5 will hold.
    pub fn into_raw(under: *mut c_void, vol: UnderVol, node: Option<Arc<Node>>) -> *mut c_void {
        Box::into_raw(Box::new(VolObj {
            magic: VolObj::MAGIC,
            under,
            vol,
            node,
            req_op: None,
            req_id: 0,
            req_done: std::sync::atomic::AtomicBool::new(false),
            req_t0: 0,
        }))
        .cast()
    }

    /// Borrows the wrapper behind a pointer HDF5 passed in.
    ///
    /// # Safety
    /// `p` must be null or a pointer returned by [`VolObj::into_raw`] that was not freed.
    pub unsafe fn from_ptr<'a>(p: *mut c_void) -> Result<&'a VolObj, Error> {
        // SAFETY: per the contract, a non-null p is a live Box<VolObj>, or (see
        // [`VolObj::is_ours`]) at least 8 readable bytes of a library object.
        if !p.is_null() && !unsafe { VolObj::is_ours(p) } {
            return Err(Error::from(
                "not an h5prov object (an object HDF5 did not wrap with h5prov's wrap context)",
            ));
        }
        // SAFETY: per the contract, a non-null p is a live Box<VolObj>.
        unsafe { p.cast::<VolObj>().as_ref() }.ok_or_else(|| Error::from("NULL object"))
    }

    /// Whether `p` is a live wrapper of h5prov's, rather than a library object that HDF5
    /// passed through h5prov's level unwrapped (see the type's documentation).
    ///
    /// # Safety
    /// `p` is non-null and points to at least 8 readable, 8-byte aligned bytes (a wrapper,
    /// or an object of the library: every one of those is a larger heap struct).
    pub unsafe fn is_ours(p: *const c_void) -> bool {
        // SAFETY: per the contract.
        unsafe { std::ptr::read_volatile(p.cast::<u64>()) == VolObj::MAGIC }
    }

    /// Ends a wrapper's life (successful close, unwrap, `request_free`).
    ///
    /// # Safety
    /// `p` must come from [`VolObj::into_raw`] and not be used afterwards.
    pub unsafe fn free(p: *mut c_void) {
        if !p.is_null() {
            // SAFETY: per the contract.
            let mut w = unsafe { Box::from_raw(p.cast::<VolObj>()) };
            // SAFETY: a field of the live box; volatile, so that the store is not dropped as
            // dead before the memory is freed: a stale pointer is then never taken for ours.
            unsafe { std::ptr::write_volatile(&mut w.magic, 0) };
            if let Some(n) = w.node.take() {
                release(n);
            }
        }
    }
}

/// Lets go of a state node through the tree's close path: when this was its last holder,
/// its summary row is written (and its file's, if that was the file's last holder), or it
/// is parked in its file for a reopen ([`crate::tree::release`]).
pub fn release(node: Arc<Node>) {
    crate::tree::release(node, &mut crate::trace::object_summary);
}

/// Lets go of the objects parked in `node`'s file (`node` itself when a file).
pub fn drain_parked(node: &Node) {
    let file = if node.kind == Kind::File {
        Some(node)
    } else {
        node.file.as_deref()
    };
    if let Some(f) = file {
        crate::tree::drain(f, &mut crate::trace::object_summary);
        // A deleted dataset's token may be given to the next object, one h5prov does not
        // see created (`H5Ocopy`'s copy, a dataset created by another handle): its reopen
        // must not find the deleted one's shape.
        f.shapes.lock().clear();
    }
}

/// Whether `op` may change what a name resolves to, so that [`guard`] forgets every
/// remembered name before and after it (`tree::resolved_name`): links created, copied or
/// moved; objects copied; files opened, closed, mounted or refreshed; and, not to have to
/// tell their sub-operations apart, every `specific` and `optional` callback of files and
/// groups, the `optional` ones of links and objects, and the generic `optional`. The
/// `specific` callbacks of links and objects are told apart by [`specific_may_rename`].
/// Dataset, datatype and attribute callbacks change no link (an attribute is known by its
/// holder's token and its own name, not by a remembered name).
fn may_rename(op: Op) -> bool {
    matches!(
        op,
        Op::LinkCreate
            | Op::LinkCopy
            | Op::LinkMove
            | Op::LinkOptional
            | Op::ObjectCopy
            | Op::ObjectOptional
            | Op::FileCreate
            | Op::FileOpen
            | Op::FileClose
            | Op::FileSpecific
            | Op::FileOptional
            | Op::GroupSpecific
            | Op::GroupOptional
            | Op::GenericOptional
    )
}

/// Whether sub-operation `sub` of the link, attribute or object `specific` callback `op`
/// only looks (`H5Lexists`, iteration, `H5Oexists_by_name`, lookups, visits and flushes):
/// the one list both [`specific_may_rename`] and [`may_remove_objects`] exempt.
fn specific_only_looks(op: Op, sub: u32) -> bool {
    use h5prov_bindings::abi::common as c;
    match op {
        Op::LinkSpecific => matches!(sub, c::H5VL_LINK_EXISTS | c::H5VL_LINK_ITER),
        Op::AttrSpecific => matches!(sub, c::H5VL_ATTR_EXISTS | c::H5VL_ATTR_ITER),
        Op::ObjectSpecific => matches!(
            sub,
            c::H5VL_OBJECT_EXISTS
                | c::H5VL_OBJECT_LOOKUP
                | c::H5VL_OBJECT_VISIT
                | c::H5VL_OBJECT_FLUSH
        ),
        _ => true,
    }
}

/// Whether the link or object `specific` callback `op` with sub-operation `sub` may change
/// what a name resolves to ([`may_rename`]): all but the ones that only look. A link
/// deleted, an object's reference count changed (to 0: deleted) and a refresh (SWMR) do.
fn specific_may_rename(op: Op, sub: u32) -> bool {
    matches!(op, Op::LinkSpecific | Op::ObjectSpecific) && !specific_only_looks(op, sub)
}

/// Whether a successful `op` with sub-operation `sub` may have deleted or renamed objects
/// (so a parked node's token or name may now belong to another object): every
/// sub-operation of the link and object `specific` callbacks but the ones that only look,
/// and an object refresh, which rereads an object without removing any.
///
/// An attribute deleted or renamed removes no object: every parked object keeps its
/// token, and a parked attribute whose name is then given to a new one is ended by that
/// create (`query::attach`). Draining there wrote a file's parked objects' rows on every
/// attribute rewrite (PyTables deletes an attribute before it sets it again), so one
/// object had a row per rewrite.
fn may_remove_objects(op: Op, sub: u32) -> bool {
    use h5prov_bindings::abi::common as c;
    let refresh = op == Op::ObjectSpecific && sub == c::H5VL_OBJECT_REFRESH;
    op != Op::AttrSpecific && !(specific_only_looks(op, sub) || refresh)
}

/// The last request id handed out (ids start at 1; 0 is "no request").
static LAST_REQ_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Wraps an async request returned by the under connector in place, and returns its request
/// id (the trace's `req` column), or 0 when there was none. A request means the operation
/// is still in flight (HDF5 passes the slot holding NULL, and a connector that finished the
/// operation, as the native one always does, leaves it NULL).
///
/// `t0`: when the issuing call started (its span's start), the bound of the request's
/// execution time (see `request_end`).
///
/// # Safety
/// `req` is null or a valid `void **`.
pub unsafe fn wrap_req(
    req: *mut *mut c_void,
    vol: &UnderVol,
    op: Op,
    t0: crate::clock::Tick,
) -> u64 {
    // SAFETY: per the contract.
    unsafe { wrap_req_holding(req, vol, op, t0, None) }
}

/// [`wrap_req`], the request holding `node` (a holder of it, let go when the request is
/// freed, [`VolObj::free`]); `node` is let go at once when there is no request. At the
/// request's completion the node's deferred description runs (`request_end`).
///
/// # Safety
/// `req` is null or a valid `void **`.
pub unsafe fn wrap_req_holding(
    req: *mut *mut c_void,
    vol: &UnderVol,
    op: Op,
    t0: crate::clock::Tick,
    node: Option<Arc<Node>>,
) -> u64 {
    // SAFETY: req is null or valid per the VOL contract.
    if let Some(slot) = unsafe { req.as_mut() } {
        if !slot.is_null() {
            let id = LAST_REQ_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
            let w = Box::new(VolObj {
                magic: VolObj::MAGIC,
                under: *slot,
                vol: vol.clone(),
                node,
                req_op: Some(op),
                req_id: id,
                req_done: std::sync::atomic::AtomicBool::new(false),
                req_t0: t0,
            });
            *slot = Box::into_raw(w).cast();
            return id;
        }
    }
    if let Some(n) = node {
        release(n);
    }
    0
}

/// True when the under connector handed back a request in `req`: the operation it started
/// is still in flight, and the object it returned may not exist yet. A query about that
/// object would make the connector (vol-async) wait for the operation, destroying the
/// overlap the application asked for: h5prov asks none then (see `docs/ASYNC.md`).
///
/// # Safety
/// `req` is null or a valid `void **`.
#[inline]
pub unsafe fn request_returned(req: *mut *mut c_void) -> bool {
    // SAFETY: per the contract.
    unsafe { req.as_ref() }.is_some_and(|slot| !slot.is_null())
}

/// Reads a C string argument (lossy), `""` for NULL.
///
/// # Safety
/// `s` is null or a NUL-terminated string.
pub unsafe fn cstr<'a>(s: *const c_char) -> std::borrow::Cow<'a, str> {
    if s.is_null() {
        return "".into();
    }
    // SAFETY: per the contract.
    unsafe { CStr::from_ptr(s) }.to_string_lossy()
}

// ---------------------------------------------------------------------------------------
// The mechanical shapes. Each generated trampoline calls exactly one of these, inside its
// guard; an `Err` (a pointer that is not a wrapper) becomes the guard's error record.

/// Shape `call`: a callback on an object that returns `herr_t` and may produce a request.
///
/// # Safety
/// `obj` is a live wrapper; `call` performs the matching under-connector call.
#[inline]
pub unsafe fn shape_call(
    op: Op,
    sub: u32,
    obj: *mut c_void,
    req: *mut *mut c_void,
    call: impl FnOnce(*mut c_void, hid_t) -> herr_t,
) -> Result<herr_t, Error> {
    // SAFETY: obj is a wrapper HDF5 got from us.
    let o = unsafe { VolObj::from_ptr(obj) }?;
    // What is needed after the call is taken before it: `H5Drefresh` closes and reopens
    // the dataset inside the call, which frees this wrapper (HDF5's H5VLpassthru.c saves
    // its under connector first for the same reason). Seen under `pass_through` as a
    // garbage allocation and a hang in HDF5's swmr test.
    let (under, vol, node) = (o.under, o.vol.clone(), o.node.clone());
    let renames = specific_may_rename(op, sub);
    if renames {
        crate::tree::names_changed();
    }
    let mut span = Span::begin(op, sub);
    let r = call(under, vol.id());
    span.under_end();
    if renames {
        crate::tree::names_changed();
    }
    // SAFETY: req per the VOL contract.
    span.set_in_flight(unsafe { wrap_req(req, &vol, op, span.start()) });
    span.finish(&Event {
        node: node.as_deref(),
        status: r,
        ..Event::default()
    });
    if r >= 0 && may_remove_objects(op, sub) {
        if let Some(n) = &node {
            drain_parked(n);
        }
    }
    Ok(r)
}

/// Shape `plain`: like `call`, without a request argument.
///
/// # Safety
/// As [`shape_call`].
#[inline]
pub unsafe fn shape_plain(
    op: Op,
    sub: u32,
    obj: *mut c_void,
    call: impl FnOnce(*mut c_void, hid_t) -> herr_t,
) -> Result<herr_t, Error> {
    // SAFETY: forwarded contract; a null request slot.
    unsafe { shape_call(op, sub, obj, std::ptr::null_mut(), call) }
}

/// Shape `close`: closes the under object, timed around the real close; the wrapper is
/// freed when the close succeeds.
///
/// # Safety
/// As [`shape_call`]; `obj` is not used by HDF5 after a successful close.
pub unsafe fn shape_close(
    op: Op,
    obj: *mut c_void,
    req: *mut *mut c_void,
    call: impl FnOnce(*mut c_void, hid_t) -> herr_t,
) -> Result<herr_t, Error> {
    // SAFETY: obj is a wrapper HDF5 got from us.
    let o = unsafe { VolObj::from_ptr(obj) }?;
    // Not for an asynchronous close: the query would wait for the dataset's pending work.
    // Only for the dataset's last handle: the query flushes its dirty chunks (HDF5's
    // `H5D__chunk_allocated`), which the close of the last handle does anyway, but a close
    // of another handle (one HDF5 opened for an iteration, or a second open) while the
    // application goes on writing would make HDF5 write chunks earlier, and the file would
    // not be the one written without h5prov.
    if op == Op::DatasetClose && req.is_null() {
        if let Some(n) = o.node.as_ref().filter(|n| n.held_only_by_one()) {
            // SAFETY: o.under is the live dataset of connector o.vol, not yet closed.
            unsafe { record_stored_size(n, o.under, o.vol.id()) };
        }
    }
    let mut span = Span::begin(op, crate::subops::NONE);
    let r = call(o.under, o.vol.id());
    span.under_end();
    let node = o.node.clone();
    // SAFETY: req per the VOL contract.
    let deferred = r >= 0 && unsafe { request_returned(req) };
    // A close left in flight: its request holds the object's node, so its summary row (or
    // its parking in its file) waits for the request's free; for a file, also the rows of
    // the objects parked in it, its own row (its `stat` at close) and the drain of the
    // record buffers (`request_end`): all off the call's issue path (`docs/ASYNC.md`).
    let holder = if deferred { node.clone() } else { None };
    // SAFETY: req per the VOL contract.
    span.set_in_flight(unsafe { wrap_req_holding(req, &o.vol, op, span.start(), holder) });
    if r >= 0 {
        if op == Op::FileClose && !deferred {
            // The objects parked in the file go first: their rows, then the file's.
            if let Some(n) = &node {
                drain_parked(n);
            }
        }
        // SAFETY: HDF5 drops its handle after a successful close.
        unsafe { VolObj::free(obj) };
    }
    span.finish(&Event {
        node: node.as_deref(),
        status: r,
        ..Event::default()
    });
    if let Some(n) = node {
        release(n);
    }
    Ok(r)
}

/// Records a filtered dataset's storage size (`H5Dget_storage_size`) on its node, before
/// the dataset closes: the one fact the filters' compression ratio needs. Unfiltered
/// datasets are not asked (their stored size is their extent), and a filtered one only when
/// it was written since it was last asked: this costs one lock and a string test per
/// dataset close, and one chunk-index walk per filtered close after writes (not per close
/// of a dataset read through open-read-close loops, as h5py's `f["x"][i]` does).
///
/// # Safety
/// `under` is a live dataset of connector `vol`.
unsafe fn record_stored_size(n: &Node, under: *mut c_void, vol: hid_t) {
    let filtered = n
        .shape
        .lock()
        .as_ref()
        .is_some_and(|s| !s.filters.is_empty());
    if !filtered {
        return;
    }
    let writes = {
        let st = n.stats.lock();
        if st.stored_at_writes == Some(st.writes) {
            return;
        }
        st.writes
    };
    // SAFETY: as this function's contract.
    if let Some(size) = unsafe { query::storage_size(under, vol) } {
        let mut st = n.stats.lock();
        st.stored_bytes = size;
        st.stored_at_writes = Some(writes);
    }
}

/// What an opening callback knows about the object it opens.
pub struct Opening<'a> {
    /// Kind of the new object.
    pub kind: Kind,
    /// The name argument, if any.
    pub name: *const c_char,
    /// The location parameters, if any.
    pub loc: *const H5VL_loc_params_t,
    /// The transfer property list.
    pub dxpl: hid_t,
    /// True for create/commit callbacks.
    pub created: bool,
    /// Creation arguments of a dataset (type, space, dcpl).
    pub dataset: Option<(hid_t, hid_t, hid_t)>,
    /// The dataset access property list of a dataset create/open, else -1.
    pub dapl: hid_t,
    /// Marker for the borrowed pointers.
    pub _p: std::marker::PhantomData<&'a ()>,
}

/// Shape `open`: a callback that returns a new object, wrapped with its shared state node.
///
/// # Safety
/// As [`shape_call`]; `open.name`/`open.loc` are valid or null.
pub unsafe fn shape_open(
    op: Op,
    obj: *mut c_void,
    req: *mut *mut c_void,
    open: Opening<'_>,
    call: impl FnOnce(*mut c_void, hid_t) -> *mut c_void,
) -> Result<*mut c_void, Error> {
    // SAFETY: obj is a wrapper HDF5 got from us.
    let o = unsafe { VolObj::from_ptr(obj) }?;
    let mut span = Span::begin(op, crate::subops::NONE);
    let generation = crate::tree::names_generation();
    let under = call(o.under, o.vol.id());
    span.under_end();
    if under.is_null() {
        span.finish(&Event {
            node: o.node.as_deref(),
            status: -1,
            kind: open.kind,
            ..Event::default()
        });
        return Ok(std::ptr::null_mut());
    }
    // SAFETY: req per the VOL contract.
    let pending = unsafe { request_returned(req) };
    // SAFETY: under is the under connector's new object; name/loc per the contract.
    let node = unsafe { query::attach(o, under, &open, pending, generation) };
    // SAFETY: req per the VOL contract.
    span.set_in_flight(unsafe { wrap_req(req, &o.vol, op, span.start()) });
    span.finish(&Event {
        node: Some(&node),
        status: 0,
        ..Event::default()
    });
    Ok(VolObj::into_raw(under, o.vol.clone(), Some(node)))
}

/// `op_type` of an argument struct, or [`crate::subops::NONE`] for NULL.
macro_rules! sub_of {
    ($args:expr) => {
        // SAFETY: HDF5 passes a valid args pointer or NULL.
        match unsafe { $args.as_ref() } {
            Some(a) => a.op_type as u32,
            None => $crate::subops::NONE,
        }
    };
}
pub(crate) use sub_of;

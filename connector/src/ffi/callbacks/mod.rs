//! The callbacks with special logic, following HDF5's `src/H5VLpassthru.c`:
//! connector life cycle, info and wrap callbacks, file create/open/specific/close (the FAPL's
//! VOL is swapped for the under connector's), data I/O (bytes and selections recorded),
//! callbacks whose arguments carry other objects (unwrapped), introspection, and requests.

mod info;
mod lifecycle;
mod wrap;

pub use info::{info_cmp, info_copy, info_free, info_from_str, info_to_str, Info, InfoData};
pub use lifecycle::{get_cap_flags, get_conn_cls, initialize, terminate};
pub use wrap::{free_wrap_ctx, get_object, get_wrap_ctx, unwrap_object, wrap_object};

use super::query::{self, quietly};
use super::{cstr, guard, shape_call, sub_of, wrap_req, Error, Opening, VolObj};
use crate::config::Level;
use crate::ops::Op;
use crate::trace::{self, Detail, Event, Span};
use crate::tree::{self, Io, Key, Kind, Node};
use h5prov_bindings as b;
use h5prov_bindings::*;
use info::{fapl_info, under_fapl, UnderFapl};
use std::ffi::{c_char, c_void};
use std::fmt::Write as _;
use std::marker::PhantomData;
use std::sync::Arc;

const NONE: u32 = crate::subops::NONE;
type Req = *mut *mut c_void;

// ---------------------------------------------------------------------------------------
// Files

/// The state node of a file just created or opened. `pending`: the create or open is still
/// in flight, so its file number is not asked (see [`super::request_returned`]): the file
/// gets a node of its own.
fn file_node(
    under: *mut c_void,
    vol: hid_t,
    name: &str,
    dxpl: hid_t,
    created: bool,
    pending: bool,
) -> Arc<Node> {
    let number = if pending {
        None
    } else {
        // SAFETY: under is a live file object of connector vol.
        unsafe { query::file_number(under, vol, dxpl) }
    };
    let key = match number {
        Some(n) => Key::File(n),
        None => tree::unique_key(),
    };
    let node = tree::file_node(key, name);
    node.note_open(created);
    node
}

/// `H5F_ACC_RDWR` and `H5F_ACC_TRUNC` (`H5Fpublic.h`, the same in HDF5 1.14 and 2.x).
const H5F_ACC_RDWR: u32 = 0x0001;
const H5F_ACC_TRUNC: u32 = 0x0002;

/// The `stat(2)` of the file named by the C string `name` (null: `None`).
fn file_stat(name: *const c_char) -> Option<tree::FileStat> {
    if name.is_null() {
        return None;
    }
    // SAFETY: HDF5's NUL-terminated file name, valid for the callback.
    file_stat_of(unsafe { std::ffi::CStr::from_ptr(name) })
}

/// The `stat(2)` of the file `name`.
fn file_stat_of(name: &std::ffi::CStr) -> Option<tree::FileStat> {
    use std::os::unix::ffi::OsStrExt;
    let p = std::path::Path::new(std::ffi::OsStr::from_bytes(name.to_bytes()));
    tree::FileStat::of(p)
}

/// Describes a file just created or opened on its node: the FAPL's alignment, library
/// version bounds and chunk cache, the file system, and the file's identity after the open
/// (`found`: its `stat` before; size and mtime are those, 0 for a new file). `fapl` is the
/// application's FAPL or the under FAPL copied from it (the same properties but the VOL).
fn describe_file(
    node: &Node,
    fapl: hid_t,
    name: Option<&std::ffi::CStr>,
    found: Option<tree::FileStat>,
) {
    let (align, fs_magic, libver) = (
        fapl_alignment(fapl),
        name.and_then(fs_magic),
        fapl_libver(fapl),
    );
    let at_open = if node.stats.lock().at_open.is_none() {
        name.and_then(file_stat_of)
            .or(found)
            .map(|now| tree::FileStat {
                size: found.map_or(0, |f| f.size),
                mtime_ns: found.map_or(0, |f| f.mtime_ns),
                ..now
            })
    } else {
        None
    };
    // SAFETY: a FAPL valid for this call (the application's, or our copy of it).
    let cache = unsafe { query::chunk_cache(fapl) };
    let mut st = node.stats.lock();
    st.align = st.align.or(align);
    st.libver = st.libver.or(libver);
    st.fs_magic = st.fs_magic.or(fs_magic);
    st.at_open = st.at_open.or(at_open);
    if st.chunk_cache.is_none() && !cache.is_empty() {
        st.chunk_cache = Some(cache);
    }
}

/// `flags` are the create or open flags (`created`: of `H5Fcreate`), which with whether
/// the file existed before a create give the open's [`tree::Intent`].
#[allow(clippy::too_many_arguments)]
unsafe fn file_open_common(
    op: Op,
    name: *const c_char,
    flags: u32,
    fapl: hid_t,
    dxpl: hid_t,
    req: Req,
    created: bool,
    call: impl FnOnce(hid_t) -> *mut c_void,
) -> Result<*mut c_void, Error> {
    // Once per open, not per call: the file as the process found it (a read-write open
    // may write it before returning; a create over a file destroys this version).
    let found = file_stat(name);
    let intent = match (
        created,
        flags & H5F_ACC_TRUNC != 0,
        flags & H5F_ACC_RDWR != 0,
    ) {
        (true, true, _) if found.is_some() => tree::Intent::Truncate,
        (true, _, _) => tree::Intent::Create,
        (false, _, true) => tree::Intent::ReadWrite,
        (false, _, false) => tree::Intent::ReadOnly,
    };
    // SAFETY: fapl is the application's FAPL.
    let info = unsafe { fapl_info(fapl) }
        .ok_or("the file access property list has no h5prov connector info")?;
    trace::start(&info.config, || info.text());
    let (mpio, coll_reads, coll_writes) = fapl_mpio(fapl);
    if mpio {
        trace::note_coll_metadata(coll_reads, coll_writes);
    }
    // SAFETY: fapl is a FAPL id.
    let ufapl = unsafe { under_fapl(fapl, &info) }?;
    let mut span = Span::begin(op, NONE);
    let under = call(ufapl);
    span.under_end();
    // SAFETY: req per the VOL contract.
    let pending = !under.is_null() && unsafe { super::request_returned(req) };
    if !pending {
        // SAFETY: closing our copy, without touching the error stack of a failed open.
        quietly(|| unsafe { b::H5Pclose(ufapl) });
    }
    // SAFETY: HDF5 passes the file name as a C string.
    let fname = unsafe { cstr(name) };
    if under.is_null() {
        span.finish(&Event {
            kind: Kind::File,
            status: -1,
            path: Some(&fname),
            ..Event::default()
        });
        return Ok(std::ptr::null_mut());
    }
    let node = file_node(under, info.under.id(), &fname, dxpl, created, pending);
    {
        let mut st = node.stats.lock();
        st.mpio |= mpio;
        st.intent = st.intent.max(intent);
    }
    // SAFETY: HDF5's NUL-terminated file name, valid for the callback.
    let cname = (!name.is_null()).then(|| unsafe { std::ffi::CStr::from_ptr(name) });
    let holder = if pending {
        // In flight: the description (five property queries, a statfs and a stat) is left
        // for the operation's completion, off the call's issue path (`docs/ASYNC.md`), on
        // the under FAPL, which has the application's properties and lives until then. The
        // request holds the file's node until it is freed, so the file's row (and its
        // stat at close) comes after the operation completed.
        let (ufapl, cname) = (UnderFapl(ufapl), cname.map(|c| c.to_owned()));
        node.defer_description(Box::new(move |n| {
            describe_file(n, ufapl.0, cname.as_deref(), found);
            drop(ufapl);
        }));
        Some(node.clone())
    } else {
        describe_file(&node, fapl, cname, found);
        None
    };
    // SAFETY: req per the VOL contract.
    span.set_in_flight(unsafe {
        super::wrap_req_holding(req, &info.under, op, span.start(), holder)
    });
    span.finish(&Event {
        node: Some(&node),
        ..Event::default()
    });
    Ok(VolObj::into_raw(under, info.under.clone(), Some(node)))
}

pub unsafe extern "C" fn file_create(
    name: *const c_char,
    flags: u32,
    fcpl: hid_t,
    fapl: hid_t,
    dxpl: hid_t,
    req: Req,
) -> *mut c_void {
    guard(std::ptr::null_mut(), Op::FileCreate, || {
        // SAFETY: forwarded arguments of the VOL prototype.
        unsafe {
            file_open_common(Op::FileCreate, name, flags, fapl, dxpl, req, true, |f| {
                b::H5VLfile_create(name, flags, fcpl, f, dxpl, req)
            })
        }
    })
}

pub unsafe extern "C" fn file_open(
    name: *const c_char,
    flags: u32,
    fapl: hid_t,
    dxpl: hid_t,
    req: Req,
) -> *mut c_void {
    guard(std::ptr::null_mut(), Op::FileOpen, || {
        // SAFETY: forwarded arguments of the VOL prototype.
        unsafe {
            file_open_common(Op::FileOpen, name, flags, fapl, dxpl, req, false, |f| {
                b::H5VLfile_open(name, flags, f, dxpl, req)
            })
        }
    })
}

pub unsafe extern "C" fn file_specific(
    obj: *mut c_void,
    args: *mut H5VL_file_specific_args_t,
    dxpl: hid_t,
    req: Req,
) -> herr_t {
    guard(-1, Op::FileSpecific, || {
        let sub = sub_of!(args);
        // SAFETY: HDF5 passes valid args.
        let a = unsafe { args.as_mut() }.ok_or("NULL arguments")?;
        match a.op_type {
            b::H5VL_FILE_IS_ACCESSIBLE | b::H5VL_FILE_DELETE => {
                // Called with no object: the FAPL names the connector stack.
                let is_acc = a.op_type == b::H5VL_FILE_IS_ACCESSIBLE;
                // SAFETY: the union member matching op_type.
                let (fapl, fname) = unsafe {
                    if is_acc {
                        (a.args.is_accessible.fapl_id, a.args.is_accessible.filename)
                    } else {
                        (a.args.del.fapl_id, a.args.del.filename)
                    }
                };
                // SAFETY: fapl from HDF5.
                let info = unsafe { fapl_info(fapl) }
                    .ok_or("the file access property list has no h5prov connector info")?;
                // SAFETY: fapl is a FAPL id.
                let ufapl = unsafe { under_fapl(fapl, &info) }?;
                let mut my = *a;
                if is_acc {
                    my.args.is_accessible.fapl_id = ufapl;
                } else {
                    my.args.del.fapl_id = ufapl;
                }
                let mut span = Span::begin(Op::FileSpecific, sub);
                // SAFETY: forwarded with the swapped FAPL.
                let r = unsafe {
                    b::H5VLfile_specific(std::ptr::null_mut(), info.under.id(), &mut my, dxpl, req)
                };
                span.under_end();
                // SAFETY: closing our copy, preserving the error stack.
                quietly(|| unsafe { b::H5Pclose(ufapl) });
                // SAFETY: req per the VOL contract.
                span.set_in_flight(unsafe {
                    wrap_req(req, &info.under, Op::FileSpecific, span.start())
                });
                // SAFETY: C string from HDF5.
                let fname = unsafe { cstr(fname) };
                span.finish(&Event {
                    kind: Kind::File,
                    status: r,
                    path: Some(&fname),
                    ..Event::default()
                });
                Ok(r)
            }
            b::H5VL_FILE_REOPEN => {
                // SAFETY: our wrapper.
                let o = unsafe { VolObj::from_ptr(obj) }?;
                let mut span = Span::begin(Op::FileSpecific, sub);
                // SAFETY: forwarded.
                let r = unsafe { b::H5VLfile_specific(o.under, o.vol.id(), a, dxpl, req) };
                span.under_end();
                // SAFETY: req per the VOL contract.
                span.set_in_flight(unsafe {
                    wrap_req(req, &o.vol, Op::FileSpecific, span.start())
                });
                // SAFETY: the reopen member; the new file is the under connector's object.
                unsafe {
                    let slot = a.args.reopen.file;
                    if r >= 0 && !slot.is_null() && !(*slot).is_null() {
                        if let Some(n) = &o.node {
                            n.note_open(false);
                        }
                        *slot = VolObj::into_raw(*slot, o.vol.clone(), o.node.clone());
                    }
                }
                span.finish(&Event {
                    node: o.node.as_deref(),
                    status: r,
                    ..Event::default()
                });
                Ok(r)
            }
            _ => {
                // SAFETY: forwarded as a plain call on our wrapper.
                let r = unsafe {
                    shape_call(Op::FileSpecific, sub, obj, req, |o, v| {
                        b::H5VLfile_specific(o, v, args, dxpl, req)
                    })
                }?;
                if sub == b::H5VL_FILE_FLUSH {
                    trace::flush();
                }
                Ok(r)
            }
        }
    })
}

pub unsafe extern "C" fn file_close(obj: *mut c_void, dxpl: hid_t, req: Req) -> herr_t {
    guard(-1, Op::FileClose, || {
        // SAFETY: forwarded; the close shape frees the wrapper on success.
        let r = unsafe {
            super::shape_close(Op::FileClose, obj, req, |o, v| {
                b::H5VLfile_close(o, v, dxpl, req)
            })
        }?;
        // Left in flight, the close's request drains the buffers when it is freed
        // (`request_end`), not this call.
        // SAFETY: req per the VOL contract.
        let pending = r >= 0 && unsafe { super::request_returned(req) };
        // The flush has a guard of its own whose failure value is the close's status: after
        // a successful close HDF5 must not keep (and close again) the freed wrapper.
        Ok(guard(r, Op::FileClose, || {
            super::error::maybe_test_panic_after(Op::FileClose);
            if !pending {
                trace::flush();
            }
            Ok(r)
        }))
    })
}

// ---------------------------------------------------------------------------------------
// Data I/O

const H5S_ALL: hid_t = 0;
const H5S_PLIST: hid_t = 2;

/// A dataspace id, not one of the special values H5S_ALL (0), H5S_BLOCK (1) or
/// H5S_PLIST (2). With H5S_BLOCK the memory space mirrors the file selection, so the file
/// selection gives the points.
fn is_real_space(id: hid_t) -> bool {
    id > H5S_PLIST
}

/// Appends a bounding box, `start:end` per dimension joined by `x`, to `d`.
fn put_bbox(d: &mut Detail, start: &[u64], end: &[u64]) {
    for (i, (s, e)) in start.iter().zip(end).enumerate() {
        if i > 0 {
            let _ = d.write_str("x");
        }
        let _ = d.write_str(itoa::Buffer::new().format(*s));
        let _ = d.write_str(":");
        let _ = d.write_str(itoa::Buffer::new().format(*e));
    }
}

/// Bytes, points and selection of one dataset or attribute access. At `level>=dataset`
/// (where records are written) also the memory datatype, whether it differs from the
/// file's, and the file selection's block count and bounding box (into `bbox`).
#[allow(clippy::too_many_arguments)]
fn io_info(
    node: Option<&Node>,
    mem_type: hid_t,
    mem_space: hid_t,
    file_space: hid_t,
    dxpl: Option<hid_t>,
    write: bool,
    level: Level,
    detail: Option<&mut Detail>,
    bbox: &mut Detail,
) -> Io {
    // Attribute I/O (no DXPL here) goes through the metadata cache: no transfer mode.
    let xfer = dxpl.map_or("", |dxpl| requested_xfer(node, dxpl));
    let fields = level >= Level::Dataset;
    // One look at the cached shape: file datatype, extent (for H5S_ALL).
    let (ftype, shape_points, shape_ndims) = match node {
        Some(n) => {
            let g = n.shape.lock();
            match g.as_ref() {
                Some(s) => {
                    if fields && file_space == H5S_ALL && s.dims.iter().all(|&d| d > 0) {
                        let mut end = [0u64; 32];
                        let k = s.dims.len().min(32);
                        for (e, d) in end.iter_mut().zip(&s.dims) {
                            *e = d - 1;
                        }
                        put_bbox(bbox, &[0u64; 32][..k], &end[..k]);
                    }
                    (s.ftype, Some(s.npoints()), Some(s.dims.len() as u32))
                }
                None => (None, None, None),
            }
        }
        None => (None, None, None),
    };
    // SAFETY: plain HDF5 queries on ids the application passed to this call.
    unsafe {
        let (type_size, mem) = query::datatype(mem_type, fields);
        let mut blocks = 0;
        let real_file_space = is_real_space(file_space);
        let file_points = if real_file_space {
            b::H5Sget_select_npoints(file_space).max(0) as u64
        } else {
            0
        };
        let (npoints, sel, ndims) = if real_file_space && !fields {
            // Below `level=dataset` no record is written: the bytes are all the counters
            // need (three selection queries fewer per transfer).
            (file_points, "", 0)
        } else if real_file_space {
            // Each query is a public HDF5 call, a few hundred instructions of API entry
            // and exit whatever it answers, so as few as the fields allow: the bounds
            // also give the rank (HDF5 fills one entry per dimension).
            let ty = b::H5Sget_select_type(file_space);
            let (mut start, mut end) = ([u64::MAX; 32], [0u64; 32]);
            let bounded = !matches!(ty, b::H5S_SEL_NONE | b::H5S_SEL_ERROR)
                && b::H5Sget_select_bounds(file_space, start.as_mut_ptr(), end.as_mut_ptr()) >= 0;
            let nd = if bounded {
                start.iter().take_while(|&&s| s != u64::MAX).count() as u32
            } else {
                b::H5Sget_simple_extent_ndims(file_space).max(0) as u32
            };
            let k = nd as usize;
            blocks = match ty {
                b::H5S_SEL_ALL => 1,
                b::H5S_SEL_POINTS => b::H5Sget_select_elem_npoints(file_space).max(0) as u64,
                b::H5S_SEL_HYPERSLABS => b::H5Sget_select_hyper_nblocks(file_space).max(0) as u64,
                _ => 0,
            };
            let sel = match ty {
                b::H5S_SEL_NONE => "none",
                b::H5S_SEL_POINTS => "points",
                // One block is regular: no need to ask.
                b::H5S_SEL_HYPERSLABS if blocks == 1 => "hyperslab",
                b::H5S_SEL_HYPERSLABS => {
                    if b::H5Sis_regular_hyperslab(file_space) > 0 {
                        "hyperslab"
                    } else {
                        "irregular"
                    }
                }
                b::H5S_SEL_ALL => "all",
                _ => "",
            };
            if bounded && k > 0 && !sel.is_empty() {
                put_bbox(bbox, &start[..k], &end[..k]);
            }
            (file_points, sel, nd)
        } else {
            let n = if is_real_space(mem_space) {
                b::H5Sget_select_npoints(mem_space).max(0) as u64
            } else if file_space == H5S_ALL {
                shape_points.unwrap_or(0)
            } else {
                0
            };
            let sel = if file_space == H5S_ALL { "all" } else { "" };
            if fields && file_space == H5S_ALL {
                blocks = 1;
            }
            (n, sel, shape_ndims.unwrap_or(0))
        };
        if let Some(d) = detail {
            selection_detail(d, file_space, sel, ndims);
        }
        let conv = match (mem, ftype) {
            (Some(m), Some(f)) => u8::from(m != f),
            _ => 0,
        };
        Io {
            bytes: npoints * type_size,
            type_size,
            ndims,
            npoints,
            sel,
            xfer,
            xfer_actual: "",
            write,
            mem_type: mem,
            conv,
            file_bytes: ftype.map_or(0, |f| npoints * f.size),
            blocks,
        }
    }
}

/// The MPI-IO queries of the bound HDF5, if it is a parallel build.
fn mpio() -> Option<&'static b::mpio::Mpio> {
    b::loader::bound().and_then(|b| b.mpio.as_ref())
}

/// Whether `node` lives in a file opened with the MPI-IO driver.
fn in_mpio_file(node: Option<&Node>) -> bool {
    node.and_then(|n| n.file.as_ref())
        .is_some_and(|f| f.stats.lock().mpio)
}

/// The transfer mode requested on the DXPL, for files using MPI-IO (empty for serial
/// HDF5, which has no MPI-IO transfer modes).
fn requested_xfer(node: Option<&Node>, dxpl: hid_t) -> &'static str {
    let Some(m) = mpio() else {
        return "";
    };
    if !in_mpio_file(node) {
        return "";
    }
    // H5P_DEFAULT is the default DXPL, whose mode is independent. Asking HDF5 about it
    // fails ("not a dxpl"), and HDF5 prints that failure into the application's stderr.
    if dxpl == b::H5P_DEFAULT_ID {
        return "independent";
    }
    let mut mode: b::mpio::H5FD_mpio_xfer_t = 0;
    // SAFETY: a property query on the application's DXPL.
    let r = quietly(|| unsafe { (m.H5Pget_dxpl_mpio)(dxpl, &mut mode) });
    match (r >= 0, mode) {
        (true, b::mpio::H5FD_MPIO_COLLECTIVE) => "collective",
        (true, _) => "independent",
        _ => "",
    }
}

/// The transfer mode HDF5 used for the dataset read or write that just returned inside
/// this callback, which the caller requested collective on a file using MPI-IO: HDF5 keeps
/// it in its API context, not in the DXPL (which gets `H5Pget_mpio_actual_io_mode` only
/// when the API call returns). `H5D__ioinfo_adjust` (`H5Dio.c`) switches the context's mode
/// from collective to independent, for the whole (multi-dataset) call, exactly when it
/// breaks the collective request: some rank has a non-zero no-collective cause (datatype
/// conversion, data transform, compact layout, ...). Chunked collective I/O that accesses
/// some chunks independently (`H5D_MPIO_CHUNK_INDEPENDENT`/`_MIXED`) stays collective:
/// every rank takes part in the collective path. A read HDF5 skips (no storage allocated
/// yet, only fill values) keeps the requested mode. Empty when the bound HDF5 does not
/// export the private query.
fn actual_xfer() -> &'static str {
    let Some(get) = mpio().and_then(|m| m.H5CX_get_io_xfer_mode) else {
        return "";
    };
    let mut mode = b::mpio::H5FD_MPIO_COLLECTIVE;
    // SAFETY: called inside the dataset I/O callback, so inside the API call's context,
    // whose DXPL is the application's collective (so not the default) one.
    let r = quietly(|| unsafe { get(&mut mode) });
    match (r >= 0, mode) {
        (true, b::mpio::H5FD_MPIO_COLLECTIVE) => "collective",
        (true, b::mpio::H5FD_MPIO_INDEPENDENT) => "independent",
        _ => "",
    }
}

/// The FAPL's low bound of `H5Pset_libver_bounds` by name (`earliest`, `v18`, `v110`,
/// `v112`, `v114`, `v200`; a value this HDF5 added later by number); `None` when the query
/// fails. Once per file open: one property lookup.
fn fapl_libver(fapl: hid_t) -> Option<&'static str> {
    let (mut low, mut high) = (0, 0);
    // SAFETY: a property query on the application's FAPL, into two locals.
    let r = quietly(|| unsafe { b::H5Pget_libver_bounds(fapl, &mut low, &mut high) });
    (r >= 0).then_some(match low {
        0 => "earliest",
        1 => "v18",
        2 => "v110",
        3 => "v112",
        4 => "v114",
        5 => "v200",
        _ => "later",
    })
}

/// The FAPL's `H5Pset_alignment` (threshold, alignment); `None` when the query fails.
fn fapl_alignment(fapl: hid_t) -> Option<(u64, u64)> {
    let (mut threshold, mut alignment) = (0, 0);
    // SAFETY: a property query on the application's FAPL.
    let r = quietly(|| unsafe { b::H5Pget_alignment(fapl, &mut threshold, &mut alignment) });
    (r >= 0).then_some((threshold, alignment))
}

/// The `statfs` magic of the file system holding the file `name`.
fn fs_magic(name: &std::ffi::CStr) -> Option<i64> {
    // SAFETY: statfs fills a zeroed struct; name is NUL-terminated.
    unsafe {
        let mut st: libc::statfs = std::mem::zeroed();
        (libc::statfs(name.as_ptr(), &mut st) == 0).then_some(st.f_type as i64)
    }
}

/// Whether a FAPL uses the MPI-IO driver, and its collective metadata settings
/// (reads, writes); all false for serial HDF5.
fn fapl_mpio(fapl: hid_t) -> (bool, bool, bool) {
    let Some(m) = mpio() else {
        return (false, false, false);
    };
    quietly(|| {
        // SAFETY: property queries on the application's FAPL.
        unsafe {
            let mpio = b::H5Pget_driver(fapl) == (m.H5FD_mpio_init)();
            let (mut r, mut w) = (false, false);
            (m.H5Pget_all_coll_metadata_ops)(fapl, &mut r);
            (m.H5Pget_coll_metadata_write)(fapl, &mut w);
            (mpio, r, w)
        }
    })
}

fn selection_detail(d: &mut Detail, space: hid_t, sel: &str, ndims: u32) {
    if !is_real_space(space) {
        let _ = write!(d, "{}", if space == H5S_ALL { "all" } else { "plist" });
        return;
    }
    // SAFETY: queries on the application's dataspace; arrays sized for H5S_MAX_RANK.
    unsafe {
        match sel {
            "hyperslab" => {
                let n = (ndims as usize).min(32);
                let mut a = [[0u64; 32]; 4];
                let [start, stride, count, block] = &mut a;
                if b::H5Sget_regular_hyperslab(
                    space,
                    start.as_mut_ptr(),
                    stride.as_mut_ptr(),
                    count.as_mut_ptr(),
                    block.as_mut_ptr(),
                ) >= 0
                {
                    for (label, v) in [
                        ("start", &*start),
                        ("count", &*count),
                        ("stride", &*stride),
                        ("block", &*block),
                    ] {
                        let _ = write!(d, "{label}=");
                        for (i, x) in v[..n].iter().enumerate() {
                            let _ = write!(d, "{}{x}", if i > 0 { "," } else { "" });
                        }
                        let _ = write!(d, ";");
                    }
                }
            }
            "irregular" => {
                let _ = write!(d, "blocks={}", b::H5Sget_select_hyper_nblocks(space));
            }
            "points" => {
                let _ = write!(d, "points={}", b::H5Sget_select_elem_npoints(space));
            }
            other => {
                let _ = write!(d, "{other}");
            }
        }
    }
}

/// One value per dataset of a (multi-)dataset call: on the stack for the usual single
/// dataset, so a plain `H5Dread`/`H5Dwrite` allocates nothing here.
enum PerDataset<T> {
    /// No datasets, or exactly one.
    Few(Option<T>),
    /// Several (`H5Dread_multi`/`H5Dwrite_multi`).
    Many(Vec<T>),
}

impl<T> PerDataset<T> {
    /// `f(0..n)`, stopping at the first error.
    fn try_build<E>(n: usize, mut f: impl FnMut(usize) -> Result<T, E>) -> Result<Self, E> {
        Ok(match n {
            0 => Self::Few(None),
            1 => Self::Few(Some(f(0)?)),
            _ => Self::Many((0..n).map(f).collect::<Result<_, _>>()?),
        })
    }
}

impl<T> std::ops::Deref for PerDataset<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        match self {
            Self::Few(v) => v.as_slice(),
            Self::Many(v) => v,
        }
    }
}

impl<T> std::ops::DerefMut for PerDataset<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        match self {
            Self::Few(v) => v.as_mut_slice(),
            Self::Many(v) => v,
        }
    }
}

#[allow(clippy::too_many_arguments)]
unsafe fn dataset_io(
    op: Op,
    count: usize,
    dset: *mut *mut c_void,
    mem_type: *mut hid_t,
    mem_space: *mut hid_t,
    file_space: *mut hid_t,
    dxpl: hid_t,
    req: Req,
    write: bool,
    call: impl FnOnce(*mut *mut c_void, hid_t) -> herr_t,
) -> Result<herr_t, Error> {
    if count == 0 || dset.is_null() {
        return Err("no datasets".into());
    }
    // SAFETY: HDF5 passes `count` entries in each array.
    let (dsets, mtypes, mspaces, fspaces) = unsafe {
        (
            std::slice::from_raw_parts(dset, count),
            std::slice::from_raw_parts(mem_type, count),
            std::slice::from_raw_parts(mem_space, count),
            std::slice::from_raw_parts(file_space, count),
        )
    };
    // SAFETY: our wrappers.
    let wrappers = PerDataset::try_build(count, |i| unsafe { VolObj::from_ptr(dsets[i]) })?;
    let vol = &wrappers[0].vol;
    if wrappers.iter().any(|w| w.vol.id() != vol.id()) {
        return Err("datasets of one multi-dataset call belong to different connectors".into());
    }
    let mut single = [std::ptr::null_mut::<c_void>(); 1];
    let mut many;
    let unders: &mut [*mut c_void] = if count == 1 {
        single[0] = wrappers[0].under;
        &mut single
    } else {
        many = wrappers.iter().map(|w| w.under).collect::<Vec<_>>();
        &mut many
    };
    let mut span = Span::begin(op, NONE);
    // Selections are read before the under call: public HDF5 functions clear the error
    // stack on entry, so nothing may run between a failing under call and our return.
    let want_detail = span.level() >= Level::Element;
    let mut ios = PerDataset::try_build(if span.active() { count } else { 0 }, |i| {
        let mut detail = Detail::default();
        let mut bbox = Detail::default();
        let io = io_info(
            wrappers[i].node.as_deref(),
            mtypes[i],
            mspaces[i],
            fspaces[i],
            Some(dxpl),
            write,
            span.level(),
            want_detail.then_some(&mut detail),
            &mut bbox,
        );
        Ok::<_, Error>((io, detail, bbox))
    })?;
    span.under_start();
    let r = call(unders.as_mut_ptr(), vol.id());
    span.under_end();
    // Only after a successful, synchronous transfer (an async one has not happened
    // yet), and only for a collective request: one query for the whole call, as HDF5
    // decides once for all datasets of a multi-dataset call.
    // SAFETY: req per the VOL contract.
    let pending = unsafe { super::request_returned(req) };
    if r >= 0 && !pending && ios.iter().any(|(io, _, _)| io.xfer == "collective") {
        let actual = actual_xfer();
        for (io, _, _) in ios.iter_mut() {
            if io.xfer == "collective" {
                io.xfer_actual = actual;
            }
        }
    }
    // SAFETY: req per the VOL contract.
    span.set_in_flight(unsafe { wrap_req(req, vol, op, span.start()) });
    for (w, (io, detail, bbox)) in wrappers.iter().zip(ios.iter()) {
        span.finish(&Event {
            node: w.node.as_deref(),
            status: r,
            io: Some(io),
            batch: count as u32,
            detail: detail.as_str(),
            bbox: bbox.as_str(),
            ..Event::default()
        });
    }
    Ok(r)
}

pub unsafe extern "C" fn dataset_read(
    count: usize,
    dset: *mut *mut c_void,
    mem_type: *mut hid_t,
    mem_space: *mut hid_t,
    file_space: *mut hid_t,
    dxpl: hid_t,
    buf: *mut *mut c_void,
    req: Req,
) -> herr_t {
    guard(-1, Op::DatasetRead, || {
        // SAFETY: forwarded arguments of the VOL prototype.
        unsafe {
            dataset_io(
                Op::DatasetRead,
                count,
                dset,
                mem_type,
                mem_space,
                file_space,
                dxpl,
                req,
                false,
                |u, v| {
                    b::H5VLdataset_read(
                        count, u, v, mem_type, mem_space, file_space, dxpl, buf, req,
                    )
                },
            )
        }
    })
}

pub unsafe extern "C" fn dataset_write(
    count: usize,
    dset: *mut *mut c_void,
    mem_type: *mut hid_t,
    mem_space: *mut hid_t,
    file_space: *mut hid_t,
    dxpl: hid_t,
    buf: *mut *const c_void,
    req: Req,
) -> herr_t {
    guard(-1, Op::DatasetWrite, || {
        // SAFETY: forwarded arguments of the VOL prototype.
        unsafe {
            dataset_io(
                Op::DatasetWrite,
                count,
                dset,
                mem_type,
                mem_space,
                file_space,
                dxpl,
                req,
                true,
                |u, v| {
                    b::H5VLdataset_write(
                        count, u, v, mem_type, mem_space, file_space, dxpl, buf, req,
                    )
                },
            )
        }
    })
}

unsafe fn attr_io(
    op: Op,
    attr: *mut c_void,
    mem_type: hid_t,
    req: Req,
    write: bool,
    call: impl FnOnce(*mut c_void, hid_t) -> herr_t,
) -> Result<herr_t, Error> {
    // SAFETY: our wrapper.
    let o = unsafe { VolObj::from_ptr(attr) }?;
    let mut span = Span::begin(op, NONE);
    let node = o.node.as_deref();
    // Before the under call (see dataset_io).
    let mut bbox = Detail::default();
    let io = span.active().then(|| {
        let lvl = span.level();
        io_info(
            node, mem_type, H5S_ALL, H5S_ALL, None, write, lvl, None, &mut bbox,
        )
    });
    span.under_start();
    let r = call(o.under, o.vol.id());
    span.under_end();
    // SAFETY: req per the VOL contract.
    span.set_in_flight(unsafe { wrap_req(req, &o.vol, op, span.start()) });
    span.finish(&Event {
        node,
        status: r,
        io: io.as_ref(),
        bbox: bbox.as_str(),
        ..Event::default()
    });
    Ok(r)
}

pub unsafe extern "C" fn attr_read(
    attr: *mut c_void,
    mem_type: hid_t,
    buf: *mut c_void,
    dxpl: hid_t,
    req: Req,
) -> herr_t {
    guard(-1, Op::AttrRead, || {
        // SAFETY: forwarded.
        unsafe {
            attr_io(Op::AttrRead, attr, mem_type, req, false, |o, v| {
                b::H5VLattr_read(o, v, mem_type, buf, dxpl, req)
            })
        }
    })
}

pub unsafe extern "C" fn attr_write(
    attr: *mut c_void,
    mem_type: hid_t,
    buf: *const c_void,
    dxpl: hid_t,
    req: Req,
) -> herr_t {
    guard(-1, Op::AttrWrite, || {
        // SAFETY: forwarded.
        unsafe {
            attr_io(Op::AttrWrite, attr, mem_type, req, true, |o, v| {
                b::H5VLattr_write(o, v, mem_type, buf, dxpl, req)
            })
        }
    })
}

pub unsafe extern "C" fn dataset_specific(
    obj: *mut c_void,
    args: *mut H5VL_dataset_specific_args_t,
    dxpl: hid_t,
    req: Req,
) -> herr_t {
    guard(-1, Op::DatasetSpecific, || {
        let sub = sub_of!(args);
        // SAFETY: forwarded as a plain call.
        let r = unsafe {
            shape_call(Op::DatasetSpecific, sub, obj, req, |o, v| {
                b::H5VLdataset_specific(o, v, args, dxpl, req)
            })
        }?;
        if r < 0 || sub != b::H5VL_DATASET_SET_EXTENT {
            return Ok(r);
        }
        // Keep the cached extent current (H5S_ALL accesses count the whole extent), in a
        // guard of its own: a failure here is h5prov's and leaves the extent HDF5 set, so
        // the status stands.
        Ok(guard(r, Op::DatasetSpecific, || {
            super::error::maybe_test_panic_after(Op::DatasetSpecific);
            // SAFETY: obj is still our wrapper (set_extent does not close); args valid.
            unsafe { note_new_extent(obj, args) };
            Ok(r)
        }))
    })
}

/// After a successful set-extent: the dataset's cached shape takes the new extent.
///
/// # Safety
/// `obj` is a live wrapper and `args` the set-extent arguments HDF5 passed.
unsafe fn note_new_extent(obj: *mut c_void, args: *mut H5VL_dataset_specific_args_t) {
    // SAFETY: per the contract.
    let (Ok(o), Some(a)) = (unsafe { VolObj::from_ptr(obj) }, unsafe { args.as_ref() }) else {
        return;
    };
    let Some(n) = &o.node else { return };
    let mut shape = n.shape.lock();
    let Some(s) = shape.as_mut() else { return };
    // SAFETY: the set_extent member matches op_type.
    let size = unsafe { a.args.set_extent.size };
    if size.is_null() {
        return;
    }
    let nd = s.dims.len();
    // SAFETY: HDF5 passes one new size per dimension of the dataset.
    s.dims = unsafe { std::slice::from_raw_parts(size, nd) }.to_vec();
    if let (Some(f), Key::Object(_, t)) = (&n.file, &n.key) {
        f.shapes.lock().insert(*t, s.clone());
    }
}

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

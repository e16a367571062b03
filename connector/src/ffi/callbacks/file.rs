//! Files: `file_create` and `file_open` (the FAPL's VOL swapped for the under
//! connector's, the file's state node made and described), `file_specific` and
//! `file_close`.

use super::data_io::mpio;
use super::info::{fapl_info, under_fapl, UnderFapl};
use super::{Req, NONE};
use crate::ffi::query::{self, quietly};
use crate::ffi::sys;
use crate::ffi::{cstr, guard, shape_call, sub_of, wrap_req, Error, VolObj};
use crate::ops::Op;
use crate::trace::{self, Event, Span};
use crate::tree::{self, Key, Kind, Node};
use h5prov_bindings as b;
use h5prov_bindings::*;
use std::ffi::{c_char, c_void};
use std::sync::Arc;

/// The state node of a file just created or opened. `pending`: the create or open is still
/// in flight, so its file number is not asked (see [`crate::ffi::request_returned`]): the file
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

/// `H5F_ACC_RDWR`, `H5F_ACC_TRUNC` and `H5F_ACC_EXCL` (`H5Fpublic.h`, the same in HDF5 1.14
/// and 2.x).
const H5F_ACC_RDWR: u32 = 0x0001;
const H5F_ACC_TRUNC: u32 = 0x0002;
/// `H5F_ACC_EXCL`: a create fails if the file exists.
const H5F_ACC_EXCL: u32 = 0x0004;

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
    file_stat_born(name).map(|(s, _)| s)
}

/// The `stat(2)` of the file `name`, with its birth time if the file system keeps one.
fn file_stat_born(name: &std::ffi::CStr) -> Option<(tree::FileStat, Option<u64>)> {
    use std::os::unix::ffi::OsStrExt;
    let p = std::path::Path::new(std::ffi::OsStr::from_bytes(name.to_bytes()));
    tree::FileStat::of_born(p)
}

/// Describes a file just created or opened on its node: the FAPL's alignment, library
/// version bounds and chunk cache, the file system, and the file's identity after the open
/// (`found`: its `stat` before; size and mtime are those, 0 for a new file). `fapl` is the
/// application's FAPL or the under FAPL copied from it (the same properties but the VOL).
///
/// `born_after`: for a create with no `stat` before it (one issued asynchronously, see
/// `file_open_common`), the coarse wall clock at its issue. The file's birth time then
/// tells whether the create made it (born at or after) or truncated a file that was there
/// (born before: `truncate`, the version destroyed unknown, so its size and mtime are 0);
/// with no birth time, the intent stays unknown.
fn describe_file(
    node: &Node,
    fapl: hid_t,
    name: Option<&std::ffi::CStr>,
    found: Option<tree::FileStat>,
    born_after: Option<u64>,
) {
    let (align, fs_magic, libver) = (
        fapl_alignment(fapl),
        name.and_then(fs_magic),
        fapl_libver(fapl),
    );
    let need_stat = node.stats.lock().at_open.is_none();
    let now = if need_stat || born_after.is_some() {
        name.and_then(file_stat_born)
    } else {
        None
    };
    let intent = born_after.map(|t| match now.and_then(|(_, born)| born) {
        Some(born) if born < t => tree::Intent::Truncate,
        Some(_) => tree::Intent::Create,
        None => tree::Intent::Unknown,
    });
    let at_open = if need_stat {
        now.map(|(s, _)| s).or(found).map(|now| tree::FileStat {
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
    if let Some(intent) = intent {
        st.intent = st.intent.max(intent);
    }
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
    // SAFETY: fapl is the application's FAPL.
    let info = unsafe { fapl_info(fapl) }
        .ok_or("the file access property list has no h5prov connector info")?;
    // Once per open, not per call: the file as the process found it, by a `stat` before
    // the call (a read-write open may write it before returning; a create over a file
    // destroys this version), except for two creates. With `H5F_ACC_EXCL` a create that
    // succeeds made a new file. One issued with a request slot to connectors that run
    // operations asynchronously must return at once, and that `stat` was most of h5prov's
    // own issue time (a path lookup of a name not yet there: 15–24 µs of a warm
    // `H5Fcreate_async` + `H5Dcreate_async` over vol-async, docs/ASYNC.md); its file's
    // birth time tells at completion whether it truncated a file ([`describe_file`]).
    let excl = created && flags & H5F_ACC_EXCL != 0;
    let born_after =
        (created && !excl && !req.is_null() && info.under_runs_async()).then(sys::coarse_wall_ns);
    let found = if excl || born_after.is_some() {
        None
    } else {
        file_stat(name)
    };
    let intent = match (
        created,
        flags & H5F_ACC_TRUNC != 0,
        flags & H5F_ACC_RDWR != 0,
    ) {
        // Told by the file's birth time once it exists.
        (true, _, _) if born_after.is_some() => tree::Intent::Unknown,
        (true, true, _) if found.is_some() => tree::Intent::Truncate,
        (true, _, _) => tree::Intent::Create,
        (false, _, true) => tree::Intent::ReadWrite,
        (false, _, false) => tree::Intent::ReadOnly,
    };
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
    let pending = !under.is_null() && unsafe { crate::ffi::request_returned(req) };
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
            describe_file(n, ufapl.0, cname.as_deref(), found, born_after);
            drop(ufapl);
        }));
        Some(node.clone())
    } else {
        describe_file(&node, fapl, cname, found, born_after);
        None
    };
    // SAFETY: req per the VOL contract.
    span.set_in_flight(unsafe {
        crate::ffi::wrap_req_holding(req, &info.under, op, span.start(), holder)
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
            crate::ffi::shape_close(Op::FileClose, obj, req, |o, v| {
                b::H5VLfile_close(o, v, dxpl, req)
            })
        }?;
        // Left in flight, the close's request drains the buffers when it is freed
        // (`request_end`), not this call.
        // SAFETY: req per the VOL contract.
        let pending = r >= 0 && unsafe { crate::ffi::request_returned(req) };
        // The flush has a guard of its own whose failure value is the close's status: after
        // a successful close HDF5 must not keep (and close again) the freed wrapper.
        Ok(guard(r, Op::FileClose, || {
            crate::ffi::error::maybe_test_panic_after(Op::FileClose);
            if !pending {
                trace::flush();
            }
            Ok(r)
        }))
    })
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

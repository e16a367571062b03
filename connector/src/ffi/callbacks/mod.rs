//! The callbacks with special logic, following HDF5's `src/H5VLpassthru.c`:
//! connector life cycle, info and wrap callbacks, file create/open/specific/close (the FAPL's
//! VOL is swapped for the under connector's), data I/O (bytes and selections recorded),
//! callbacks whose arguments carry other objects (unwrapped), introspection, and requests.

mod file;
mod info;
mod lifecycle;
mod wrap;

pub use file::{file_close, file_create, file_open, file_specific};
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
use std::ffi::{c_char, c_void};
use std::fmt::Write as _;
use std::marker::PhantomData;

const NONE: u32 = crate::subops::NONE;
type Req = *mut *mut c_void;

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

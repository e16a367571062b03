//! Data I/O: `dataset_read`/`dataset_write` (one or many datasets a call) and
//! `attr_read`/`attr_write`, with the bytes, selections and transfer modes they record,
//! and `dataset_specific` (a new extent noted on the dataset's node).

use super::{Req, NONE};
use crate::config::Level;
use crate::ffi::query::{self, quietly};
use crate::ffi::{guard, shape_call, sub_of, wrap_req, Error, VolObj};
use crate::ops::Op;
use crate::trace::{Detail, Event, Span};
use crate::tree::{Io, Key, Node};
use h5prov_bindings as b;
use h5prov_bindings::*;
use std::ffi::c_void;
use std::fmt::Write as _;

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
pub(super) fn mpio() -> Option<&'static b::mpio::Mpio> {
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
    let pending = unsafe { crate::ffi::request_returned(req) };
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
            crate::ffi::error::maybe_test_panic_after(Op::DatasetSpecific);
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

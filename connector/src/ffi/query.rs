//! Attaching new objects to the homomorphic tree, and the few metadata queries that needs:
//! one object-info query (file number and token) at open, and for a dataset opened (not
//! created) for the first time, its space, type and layout. Nothing here runs on the
//! read/write hot path. The application's error stack is saved and restored around every
//! query, so a failing query is invisible to it.

use super::{cstr, Opening, VolObj};
use crate::tree::{self, Key, Kind, NewNode, Node, Shape, TypeSig};
use h5prov_bindings as b;

use h5prov_bindings::{hid_t, H5VL_loc_params_t};
use std::ffi::c_void;
use std::sync::Arc;

/// Runs `f` with the application's HDF5 error stack preserved: public HDF5 functions clear
/// the stack on entry and push records on failure, and neither may show.
///
/// The common case is an empty stack (the call being traced succeeded): then `f` runs
/// directly and whatever it pushed is cleared (`H5E*` functions never clear on entry).
/// Otherwise the stack is saved and restored, which allocates.
pub fn quietly<R>(f: impl FnOnce() -> R) -> R {
    // SAFETY: H5Eget_num does not clear the stack; 0 is H5E_DEFAULT.
    if unsafe { b::H5Eget_num(0) } == 0 {
        let r = f();
        // SAFETY: as above.
        if unsafe { b::H5Eget_num(0) } != 0 {
            // SAFETY: clearing what f pushed; the stack was empty before.
            unsafe { b::H5Eclear2(0) };
        }
        return r;
    }
    // SAFETY: plain HDF5 calls; the saved stack id is handed back to HDF5.
    let saved = unsafe { b::H5Eget_current_stack() };
    let r = f();
    if saved >= 0 {
        // SAFETY: as above.
        unsafe { b::H5Eset_current_stack(saved) };
    }
    r
}

/// How long the operation of the finished request `under` ran, in ns, as connector `vol`
/// answers `H5VL_REQUEST_GET_EXEC_TIME`; 0 when it gives no answer. Asked only once the
/// request has finished, so it never waits (vol-async reads two clock values of its task).
///
/// # Safety
/// `under` is a live request of connector `vol`.
pub unsafe fn request_exec_ns(under: *mut c_void, vol: hid_t) -> u64 {
    let (mut ts, mut ns) = (0u64, 0u64);
    let mut args = b::H5VL_request_specific_args_t {
        op_type: b::H5VL_REQUEST_GET_EXEC_TIME,
        args: b::H5VL_request_specific_args_t__bindgen_ty_1 {
            get_exec_time: b::H5VL_request_specific_args_t__bindgen_ty_1__bindgen_ty_2 {
                exec_ts: &mut ts,
                exec_time: &mut ns,
            },
        },
    };
    // SAFETY: a request query with valid out-pointers; a connector that cannot answer
    // pushes an error, which `quietly` removes.
    let r = quietly(|| unsafe { b::H5VLrequest_specific(under, vol, &mut args) });
    if r < 0 {
        0
    } else {
        ns
    }
}

/// `H5I_type_t` for a node kind.
pub fn h5i_type(kind: Kind) -> b::H5I_type_t {
    match kind {
        Kind::File => b::H5I_FILE,
        Kind::Group => b::H5I_GROUP,
        Kind::Dataset => b::H5I_DATASET,
        Kind::Attr => b::H5I_ATTR,
        Kind::Datatype => b::H5I_DATATYPE,
        _ => b::H5I_BADID,
    }
}

/// Node kind for an `H5I_type_t`.
pub fn kind_of(t: b::H5I_type_t) -> Kind {
    match t {
        b::H5I_FILE => Kind::File,
        b::H5I_GROUP => Kind::Group,
        b::H5I_DATASET => Kind::Dataset,
        b::H5I_ATTR => Kind::Attr,
        b::H5I_DATATYPE => Kind::Datatype,
        _ => Kind::Object,
    }
}

/// File number and token of an object, asked of the under connector.
///
/// # Safety
/// `under` is a live object of connector `vol`.
pub unsafe fn object_identity(
    under: *mut c_void,
    vol: hid_t,
    kind: Kind,
    dxpl: hid_t,
) -> Option<(u64, [u8; 16])> {
    let mut info = b::H5O_info2_t::default();
    let loc = b::H5VL_loc_params_t {
        obj_type: h5i_type(kind),
        type_: b::H5VL_OBJECT_BY_SELF,
        ..Default::default()
    };
    let mut args = b::H5VL_object_get_args_t {
        op_type: b::H5VL_OBJECT_GET_INFO,
        ..Default::default()
    };
    args.args.get_info = b::H5VL_object_get_args_t__bindgen_ty_1__bindgen_ty_4 {
        fields: 1, // H5O_INFO_BASIC: file number, token, type, reference count
        oinfo: &mut info,
    };
    let r = quietly(|| {
        // SAFETY: valid loc/args structs that outlive the call; synchronous (no request).
        unsafe { b::H5VLobject_get(under, &loc, vol, &mut args, dxpl, std::ptr::null_mut()) }
    });
    (r >= 0).then_some((info.fileno, info.token.__data))
}

/// File number of a file object.
///
/// # Safety
/// `under` is a live file object of connector `vol`.
pub unsafe fn file_number(under: *mut c_void, vol: hid_t, dxpl: hid_t) -> Option<u64> {
    let mut fileno: std::ffi::c_ulong = 0;
    let mut args = b::H5VL_file_get_args_t {
        op_type: b::H5VL_FILE_GET_FILENO,
        ..Default::default()
    };
    args.args.get_fileno = b::H5VL_file_get_args_t__bindgen_ty_1__bindgen_ty_4 {
        fileno: &mut fileno,
    };
    let r = quietly(|| {
        // SAFETY: valid args; synchronous.
        unsafe { b::H5VLfile_get(under, vol, &mut args, dxpl, std::ptr::null_mut()) }
    });
    (r >= 0).then_some(fileno as u64)
}

fn layout_name(l: i32) -> &'static str {
    match l {
        0 => "compact",
        1 => "contiguous",
        2 => "chunked",
        3 => "virtual",
        _ => "",
    }
}

/// The signature of a datatype: its class, size, and the byte order and sign where they
/// apply (one to three cheap queries besides the size).
///
/// # Safety
/// `type_id` is a datatype id.
pub unsafe fn type_sig(type_id: hid_t, size: u64) -> Option<TypeSig> {
    // SAFETY: plain queries on a datatype id the caller holds.
    unsafe {
        let class = b::H5Tget_class(type_id) as i32;
        if !(0..=i8::MAX as i32).contains(&class) {
            return None;
        }
        let order = match class {
            0 | 1 | 2 | 4 | 8 | 11 => b::H5Tget_order(type_id) as i8,
            _ => -1,
        };
        let sign = if class == 0 {
            b::H5Tget_sign(type_id) as i8
        } else {
            -1
        };
        let vstr = class == 3 && b::H5Tis_variable_str(type_id) > 0;
        // Compounds only (class 6): a few queries per member, none for atomic types.
        let members = if class == 6 {
            compound_members(type_id)
        } else {
            0
        };
        Some(TypeSig {
            class: class as i8,
            order,
            sign,
            vstr,
            size,
            members,
        })
    }
}

/// A digest of a compound's member layout: each member's name, offset and class, hashed
/// one by one and summed, so the digest does not depend on the members' order (HDF5
/// matches members by name). Two compounds whose digests differ are not equal for HDF5,
/// whose conversion path then moves each member on its own (a memory struct in another
/// field order than the file's). Not `H5Tequal`: that needs the dataset's own datatype id
/// at each transfer, which the connector does not keep (it keeps [`TypeSig`]s); this
/// compares the two sides by the same summary, and costs nothing for the atomic types of
/// nearly every transfer. No allocation of h5prov's own: three queries a member, and the
/// name HDF5 allocates, hashed in place and freed.
///
/// # Safety
/// `type_id` is a compound datatype id.
unsafe fn compound_members(type_id: hid_t) -> u64 {
    use std::hash::{Hash, Hasher};
    // SAFETY: plain queries on a datatype id the caller holds; each member name HDF5
    // allocates is hashed, then freed with H5free_memory.
    unsafe {
        let n = b::H5Tget_nmembers(type_id);
        if n <= 0 {
            return 0;
        }
        let mut digest = 0u64;
        for i in 0..n as u32 {
            let mut h = std::collections::hash_map::DefaultHasher::new();
            let name = b::H5Tget_member_name(type_id, i);
            if !name.is_null() {
                std::ffi::CStr::from_ptr(name).to_bytes().hash(&mut h);
                b::H5free_memory(name.cast());
            }
            (b::H5Tget_member_offset(type_id, i) as u64).hash(&mut h);
            (b::H5Tget_member_class(type_id, i) as i32).hash(&mut h);
            digest = digest.wrapping_add(h.finish());
        }
        digest | 1
    }
}

/// How many predefined native types [`datatype`] knows by id.
const NATIVE_TYPES: usize = 28;

/// Where HDF5 keeps the ids of its predefined native types. They are assigned when the
/// library initialises, and again after `H5close` and a new `H5open`, so they are read
/// each time, never copied.
fn native_type_ids(api: &b::abi::api::Api) -> [*const hid_t; NATIVE_TYPES] {
    [
        api.H5T_NATIVE_SCHAR_g,
        api.H5T_NATIVE_UCHAR_g,
        api.H5T_NATIVE_SHORT_g,
        api.H5T_NATIVE_USHORT_g,
        api.H5T_NATIVE_INT_g,
        api.H5T_NATIVE_UINT_g,
        api.H5T_NATIVE_LONG_g,
        api.H5T_NATIVE_ULONG_g,
        api.H5T_NATIVE_LLONG_g,
        api.H5T_NATIVE_ULLONG_g,
        api.H5T_NATIVE_FLOAT_g,
        api.H5T_NATIVE_DOUBLE_g,
        api.H5T_NATIVE_LDOUBLE_g,
        api.H5T_NATIVE_B8_g,
        api.H5T_NATIVE_B16_g,
        api.H5T_NATIVE_B32_g,
        api.H5T_NATIVE_B64_g,
        api.H5T_NATIVE_HSIZE_g,
        api.H5T_NATIVE_HSSIZE_g,
        api.H5T_NATIVE_HBOOL_g,
        api.H5T_NATIVE_INT8_g,
        api.H5T_NATIVE_UINT8_g,
        api.H5T_NATIVE_INT16_g,
        api.H5T_NATIVE_UINT16_g,
        api.H5T_NATIVE_INT32_g,
        api.H5T_NATIVE_UINT32_g,
        api.H5T_NATIVE_INT64_g,
        api.H5T_NATIVE_UINT64_g,
    ]
}

thread_local! {
    /// Per predefined native type: the id its size and signature were last queried under,
    /// and them.
    static NATIVE_TYPES_SEEN: std::cell::RefCell<[(hid_t, u64, Option<TypeSig>); NATIVE_TYPES]> =
        const { std::cell::RefCell::new([(-1, 0, None); NATIVE_TYPES]) };
}

/// The size of a datatype and, when `sig`, its signature: a transfer's memory type, or the
/// type an attribute or dataset is created with. Almost every transfer uses a predefined
/// native type, which is immutable: its size and signature are queried once per thread
/// and then found by comparing ids (about 60 instructions instead of one to four HDF5
/// calls, each a few hundred instructions of API entry and exit). Any other type is
/// queried each time, since a user's type may be changed between transfers.
///
/// # Safety
/// `type_id` is a datatype id; HDF5 is initialised (it is calling us).
pub unsafe fn datatype(type_id: hid_t, sig: bool) -> (u64, Option<TypeSig>) {
    // SAFETY: plain queries on a datatype id the caller holds.
    let query = |sig: bool| unsafe {
        let size = b::H5Tget_size(type_id) as u64;
        (size, if sig { type_sig(type_id, size) } else { None })
    };
    if let Some(bound) = b::loader::bound() {
        for (i, id) in native_type_ids(&bound.api).into_iter().enumerate() {
            // SAFETY: a resolved HDF5 global, initialised while HDF5 is calling us.
            if unsafe { *id } == type_id {
                let (size, s) = NATIVE_TYPES_SEEN
                    .try_with(|c| {
                        let mut c = c.borrow_mut();
                        if c[i].0 != type_id {
                            let (size, s) = query(true);
                            c[i] = (type_id, size, s);
                        }
                        (c[i].1, c[i].2)
                    })
                    // Thread-local storage already destroyed.
                    .unwrap_or_else(|_| query(true));
                return (size, s.filter(|_| sig));
            }
        }
    }
    query(sig)
}

fn fill_time_name(t: i32) -> &'static str {
    match t {
        0 => "alloc",
        1 => "never",
        2 => "ifset",
        _ => "",
    }
}

/// `H5D_fill_value_t`: `H5D_FILL_VALUE_UNDEFINED` 0, `_DEFAULT` 1, `_USER_DEFINED` 2 (the
/// same in 1.14 and 2.x).
fn fill_value_name(t: i32) -> &'static str {
    match t {
        0 => "undefined",
        1 => "default",
        2 => "user",
        _ => "",
    }
}

fn alloc_time_name(t: i32) -> &'static str {
    match t {
        0 => "default",
        1 => "early",
        2 => "late",
        3 => "incr",
        _ => "",
    }
}

/// `H5D_ALLOC_TIME_DEFAULT` as HDF5 resolves it at create (`H5D__create`): early for
/// compact datasets and in files whose driver allocates early (MPI-IO), late for
/// contiguous ones, incremental for chunked and virtual ones.
/// An empty allocation time (not known) stays empty.
pub fn resolve_alloc_time(shape: &mut Shape, mpio: bool) {
    if shape.alloc_time == "default" {
        shape.alloc_time = match (mpio, shape.layout) {
            (true, _) | (_, "compact") => "early",
            (_, "contiguous") => "late",
            _ => "incr",
        };
    }
}

/// The filter pipeline of a DCPL: names of the known filters (`deflate(level)`, `shuffle`,
/// `fletcher32`, `szip`, `nbit`, `scaleoffset`), numeric ids for the others, joined by `+`
/// in pipeline order.
///
/// # Safety
/// `dcpl` is a dataset creation property list.
unsafe fn filters_of(dcpl: hid_t) -> Box<str> {
    // SAFETY: plain property queries; the out-arrays are as large as we say.
    unsafe {
        let n = b::H5Pget_nfilters(dcpl);
        if n <= 0 {
            return Box::from("");
        }
        let mut out = String::new();
        for i in 0..n.min(32) as u32 {
            let mut flags = 0u32;
            let mut nvals: usize = 8;
            let mut vals = [0u32; 8];
            let mut config = 0u32;
            let id = b::H5Pget_filter2(
                dcpl,
                i,
                &mut flags,
                &mut nvals,
                vals.as_mut_ptr(),
                0,
                std::ptr::null_mut(),
                &mut config,
            );
            if id < 0 {
                break;
            }
            if !out.is_empty() {
                out.push('+');
            }
            match id {
                1 if nvals >= 1 => {
                    out.push_str("deflate(");
                    out.push_str(itoa::Buffer::new().format(vals[0]));
                    out.push(')');
                }
                1 => out.push_str("deflate"),
                2 => out.push_str("shuffle"),
                3 => out.push_str("fletcher32"),
                4 => out.push_str("szip"),
                5 => out.push_str("nbit"),
                6 => out.push_str("scaleoffset"),
                other => out.push_str(itoa::Buffer::new().format(other)),
            }
        }
        out.into_boxed_str()
    }
}

/// The extent of a dataspace: one `H5Sget_simple_extent_dims`, which returns the rank (a
/// public HDF5 call costs a few hundred instructions whatever it answers).
///
/// # Safety
/// `space` is a dataspace id.
unsafe fn extent(space: hid_t) -> Vec<u64> {
    // H5S_MAX_RANK entries.
    let mut dims = [0u64; 32];
    // SAFETY: per the contract; dims has room for any rank.
    let n = unsafe { b::H5Sget_simple_extent_dims(space, dims.as_mut_ptr(), std::ptr::null_mut()) };
    dims[..if (0..=32).contains(&n) { n as usize } else { 0 }].to_vec()
}

/// Shape of a dataset from its type, space and creation property list (`dcpl` -1 for
/// attributes): dims, file datatype, layout, chunk dims, filters, fill and allocation
/// time. Called once per dataset and file (create or first open), never per transfer.
pub fn shape_from_ids(type_id: hid_t, space_id: hid_t, dcpl_id: hid_t) -> Shape {
    // SAFETY: plain HDF5 queries on ids the caller holds.
    unsafe {
        // An attribute or dataset created with a native type is common: its size and
        // signature come from the cache of those.
        let (type_size, ftype) = datatype(type_id, true);
        let mut shape = Shape {
            dims: extent(space_id),
            type_size,
            ftype,
            ..Shape::default()
        };
        if dcpl_id > 0 {
            let layout = b::H5Pget_layout(dcpl_id) as i32;
            shape.layout = layout_name(layout);
            if layout == 2 {
                let mut chunk = [0u64; 32];
                let r = b::H5Pget_chunk(dcpl_id, 32, chunk.as_mut_ptr());
                if (1..=32).contains(&r) {
                    shape.chunk = chunk[..r as usize].to_vec();
                }
            }
            shape.filters = filters_of(dcpl_id);
            let mut fill: b::H5D_fill_time_t = -1;
            if b::H5Pget_fill_time(dcpl_id, &mut fill) >= 0 {
                shape.fill_time = fill_time_name(fill as i32);
            }
            let mut alloc: b::H5D_alloc_time_t = -1;
            if b::H5Pget_alloc_time(dcpl_id, &mut alloc) >= 0 {
                shape.alloc_time = alloc_time_name(alloc as i32);
            }
            let mut fill: b::H5D_fill_value_t = -1;
            if b::H5Pfill_value_defined(dcpl_id, &mut fill) >= 0 {
                shape.fill = fill_value_name(fill as i32);
            }
        }
        shape
    }
}

/// The chunk cache set on a DAPL (`H5Pset_chunk_cache`) or a FAPL (`H5Pset_cache`; the
/// properties have the same names), as `nslots:nbytes:w0`; on a DAPL a part left to the
/// file's setting (`H5D_CHUNK_CACHE_*_DEFAULT`) is `-`, and it is empty when all three are
/// (the file's applies) or the list cannot be read. Three property reads: the raw values,
/// which `H5Pget_chunk_cache` would replace by the library defaults.
///
/// # Safety
/// `dapl` is a property list id or negative.
pub unsafe fn chunk_cache(dapl: hid_t) -> Box<str> {
    if dapl <= 0 {
        return Box::from("");
    }
    let (mut nslots, mut nbytes, mut w0) = (usize::MAX, usize::MAX, -1.0f64);
    let ok = quietly(|| {
        // SAFETY: property reads of the sizes HDF5 stores them with (size_t, double).
        unsafe {
            b::H5Pget(dapl, c"rdcc_nslots".as_ptr(), (&raw mut nslots).cast()) >= 0
                && b::H5Pget(dapl, c"rdcc_nbytes".as_ptr(), (&raw mut nbytes).cast()) >= 0
                && b::H5Pget(dapl, c"rdcc_w0".as_ptr(), (&raw mut w0).cast()) >= 0
        }
    });
    if !ok || (nslots == usize::MAX && nbytes == usize::MAX && w0 < 0.0) {
        return Box::from("");
    }
    let part = |v: usize| {
        if v == usize::MAX {
            "-".to_string()
        } else {
            v.to_string()
        }
    };
    let w = if w0 < 0.0 {
        "-".to_string()
    } else {
        format!("{w0}")
    };
    format!("{}:{}:{w}", part(nslots), part(nbytes)).into_boxed_str()
}

/// Whether a dataset is contiguous, not in external files and allocated: the native
/// connector's `H5Dget_offset` gives it an address. False otherwise, or when the under
/// connector does not answer the native query.
///
/// # Safety
/// `under` is a live dataset of connector `vol`.
unsafe fn allocated_contiguous(under: *mut c_void, vol: hid_t, dxpl: hid_t) -> bool {
    /// `HADDR_UNDEF`: `(haddr_t)(int64_t)-1` in `H5public.h`, a macro bindgen cannot see.
    const UNDEF: b::haddr_t = b::haddr_t::MAX;
    let mut addr: b::haddr_t = UNDEF;
    // The native connector reads the union's `get_offset` member, its first: this struct.
    let mut get = b::H5VL_native_dataset_optional_args_t__bindgen_ty_2 { offset: &mut addr };
    let mut args = b::H5VL_optional_args_t {
        op_type: b::H5VL_NATIVE_DATASET_GET_OFFSET as i32,
        args: (&mut get as *mut b::H5VL_native_dataset_optional_args_t__bindgen_ty_2).cast(),
    };
    // SAFETY: valid args for the native query; `addr` outlives the call.
    let r = unsafe { b::H5VLdataset_optional(under, vol, &mut args, dxpl, std::ptr::null_mut()) };
    r >= 0 && addr != UNDEF
}

/// Asks the under connector for a dataset's storage size (`H5Dget_storage_size`); None
/// when it does not answer.
///
/// # Safety
/// `under` is a live dataset of connector `vol`.
pub unsafe fn storage_size(under: *mut c_void, vol: hid_t) -> Option<u64> {
    quietly(|| {
        let mut size: b::hsize_t = 0;
        let mut args = b::H5VL_dataset_get_args_t {
            op_type: b::H5VL_DATASET_GET_STORAGE_SIZE,
            ..Default::default()
        };
        args.args.get_storage_size = b::H5VL_dataset_get_args_t__bindgen_ty_1__bindgen_ty_5 {
            storage_size: &mut size,
        };
        // SAFETY: valid args for the storage-size get; `size` outlives the call.
        let r = unsafe {
            b::H5VLdataset_get(
                under,
                vol,
                &mut args,
                b::H5P_DEFAULT_ID,
                std::ptr::null_mut(),
            )
        };
        (r >= 0).then_some(size)
    })
}

/// Asks the under connector for a dataset's space, type and layout.
///
/// # Safety
/// `under` is a live dataset of connector `vol`.
pub unsafe fn dataset_shape(under: *mut c_void, vol: hid_t, dxpl: hid_t) -> Option<Shape> {
    quietly(|| {
        let get = |op: b::H5VL_dataset_get_t| -> hid_t {
            let mut args = b::H5VL_dataset_get_args_t {
                op_type: op,
                ..Default::default()
            };
            // SAFETY: valid args; each get returns a new id we close below.
            let r =
                unsafe { b::H5VLdataset_get(under, vol, &mut args, dxpl, std::ptr::null_mut()) };
            if r < 0 {
                return -1;
            }
            // SAFETY: the union member matching op_type was filled in.
            unsafe {
                match op {
                    b::H5VL_DATASET_GET_SPACE => args.args.get_space.space_id,
                    b::H5VL_DATASET_GET_TYPE => args.args.get_type.type_id,
                    _ => args.args.get_dcpl.dcpl_id,
                }
            }
        };
        let space = get(b::H5VL_DATASET_GET_SPACE);
        let ty = get(b::H5VL_DATASET_GET_TYPE);
        // A contiguous dataset with its storage allocated: the creation property list
        // (a copy with fix-ups: about two thirds of h5prov's extra on a read of many
        // datasets) has nothing more that affects its I/O, so it is not asked for; its fill
        // and allocation times stay unknown (empty).
        // SAFETY: under is a live dataset of connector vol.
        let contiguous = unsafe { allocated_contiguous(under, vol, dxpl) };
        let dcpl = if contiguous {
            -1
        } else {
            get(b::H5VL_DATASET_GET_DCPL)
        };
        let shape = (space >= 0 && ty >= 0).then(|| {
            let mut s = shape_from_ids(ty, space, dcpl);
            if contiguous {
                s.layout = "contiguous";
            }
            s
        });
        // SAFETY: closing ids we own.
        unsafe {
            if space >= 0 {
                b::H5Sclose(space);
            }
            if ty >= 0 {
                b::H5Tclose(ty);
            }
            if dcpl >= 0 {
                b::H5Pclose(dcpl);
            }
        }
        shape
    })
}

/// Asks the under connector for an attribute's dataspace (its extent is what a read or
/// write moves).
///
/// # Safety
/// `under` is a live attribute of connector `vol`.
pub unsafe fn attr_shape(under: *mut c_void, vol: hid_t, dxpl: hid_t) -> Option<Shape> {
    quietly(|| {
        let mut args = b::H5VL_attr_get_args_t {
            op_type: b::H5VL_ATTR_GET_SPACE,
            ..Default::default()
        };
        // SAFETY: valid args; the returned space id is closed below.
        let r = unsafe { b::H5VLattr_get(under, vol, &mut args, dxpl, std::ptr::null_mut()) };
        if r < 0 {
            return None;
        }
        // SAFETY: the get_space member was filled in.
        let space = unsafe { args.args.get_space.space_id };
        // SAFETY: query on and close of the id we own.
        unsafe {
            let dims = extent(space);
            b::H5Sclose(space);
            Some(Shape {
                dims,
                ..Shape::default()
            })
        }
    })
}

/// Whether location parameters name the location object itself: by self, or by the name
/// `.` (`H5Lcreate_hard` names the object it is given as `cur_loc` so; PyTables opens and
/// reads every attribute with `H5Aopen_by_name(node, ".", name)`).
///
/// # Safety
/// `l` is HDF5's location parameters: a by-name location holds a valid name or NULL.
pub unsafe fn is_itself(l: &H5VL_loc_params_t) -> bool {
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

/// The name an opening callback refers to: its `name` argument, or the by-name location.
///
/// # Safety
/// `name` and `loc` are null or valid.
pub unsafe fn opened_name(name: *const std::ffi::c_char, loc: *const H5VL_loc_params_t) -> String {
    if !name.is_null() {
        // SAFETY: per the contract.
        return unsafe { cstr(name) }.into_owned();
    }
    // SAFETY: per the contract.
    match unsafe { loc.as_ref() } {
        Some(l) if l.type_ == b::H5VL_OBJECT_BY_NAME => {
            // SAFETY: the by-name member is the active one.
            unsafe { cstr(l.loc_data.loc_by_name.name) }.into_owned()
        }
        _ => String::new(),
    }
}

/// The file node an object belongs to, found from its file number; `fallback` is the
/// parent's file node. Objects reached through external links live in other files.
fn file_node_for(fileno: u64, fallback: Option<&Arc<Node>>) -> Option<Arc<Node>> {
    if let Some(f) = fallback {
        if f.key == Key::File(fileno) {
            return Some(f.clone());
        }
    }
    Some(tree::file_node(
        Key::File(fileno),
        &format!("<fileno {fileno}>"),
    ))
}

/// Builds or finds the state node of an object the under connector just returned.
/// `pending`: the operation is still in flight (the under connector returned a request), so
/// nothing is asked about the object (its identity, a dataset's or attribute's shape when
/// not given by the create's arguments): the under connector would have to wait for the
/// operation to answer. Such an object takes its identity from what the open already
/// knows, a name resolved by an earlier open at the same location ([`tree::resolved_name`]),
/// and shares that object's node; without one it gets a node of its own.
/// `generation`: [`tree::names_generation`] read before the under call: an object opened by
/// name takes its identity from [`tree::resolved_name`] when that name is remembered.
///
/// # Safety
/// `under` is the under connector's new object; the pointers in `open` are valid or null.
pub unsafe fn attach(
    parent: &VolObj,
    under: *mut c_void,
    open: &Opening<'_>,
    pending: bool,
    generation: u64,
) -> Arc<Node> {
    let vol = parent.vol.id();
    let pnode = parent.node.as_ref();
    let parent_file = pnode.and_then(|p| {
        if p.kind == Kind::File {
            Some(p.clone())
        } else {
            p.file.clone()
        }
    });
    // SAFETY: per the contract.
    let name = unsafe { opened_name(open.name, open.loc) };
    let by_self = open.loc.is_null()
        // SAFETY: checked non-null.
        || unsafe { (*open.loc).type_ } == b::H5VL_OBJECT_BY_SELF
        || !name.is_empty();
    let parent_path = pnode.map_or("/", |p| if p.kind == Kind::File { "/" } else { p.path() });
    let path = if by_self {
        tree::join_path(parent_path, &name)
    } else {
        String::new()
    };
    // `H5Dcreate_anon`, `H5Gcreate_anon`, `H5Tcommit_anon`: created with no name, at the
    // location object itself. The node gets a label until a link names it (`link_create`).
    let anonymous = open.created
        && open.name.is_null()
        && matches!(open.kind, Kind::Dataset | Kind::Group | Kind::Datatype)
        && name.is_empty();
    let (key, file) = match open.kind {
        Kind::Attr => {
            // An attribute is known by its holder and its name only when it is on the
            // object passed in (by self, or by the name `.`) and its name is given.
            // `H5Aopen_by_name` with another path names another holder, and
            // `H5Aopen_by_idx` gives no name: their keys would be shared by different
            // attributes, whose opens one after another would then find each other's
            // parked node. They get a node of their own.
            // SAFETY: checked non-null; HDF5's location parameters.
            let on_self = open.loc.is_null() || unsafe { is_itself(&*open.loc) };
            let key = match pnode.map(|p| &p.key) {
                Some(Key::Object(f, t)) if on_self && !name.is_empty() => {
                    Key::Attr(*f, *t, name.as_str().into())
                }
                Some(Key::File(f)) if on_self && !name.is_empty() => {
                    Key::Attr(*f, [0; 16], name.as_str().into())
                }
                _ => tree::unique_key(),
            };
            (key, parent_file)
        }
        kind => {
            // An open (not a create) of a name at a location object with an identity: the
            // name may be remembered (the location and the name say which object it is
            // as long as no name changed: see `tree::resolved_name`).
            // SAFETY: checked non-null.
            let by_name = open.loc.is_null()
                || matches!(
                    unsafe { (*open.loc).type_ },
                    b::H5VL_OBJECT_BY_SELF | b::H5VL_OBJECT_BY_NAME
                );
            let at = pnode
                .map(|p| &p.key)
                .filter(|k| matches!(k, Key::File(_) | Key::Object(..)));
            let named = at.filter(|_| !open.created && by_name && !name.is_empty());
            let remembered = named.and_then(|at| tree::resolved_name(generation, at, &name));
            // In flight: only what the open already knows, a name remembered from an
            // earlier open at the same location (a table lookup, no query), so a second
            // open of the object shares its node whether or not it is asynchronous.
            let identity = remembered.or_else(|| {
                if pending {
                    return None;
                }
                // SAFETY: under is a live object of connector vol.
                let found = unsafe { object_identity(under, vol, kind, open.dxpl) };
                if let (Some(at), Some(id)) = (named, found) {
                    tree::remember_name(generation, at, &name, id);
                }
                found
            });
            match identity {
                Some((fileno, token)) => (
                    Key::Object(fileno, token),
                    file_node_for(fileno, parent_file.as_ref()),
                ),
                None => (tree::unique_key(), parent_file),
            }
        }
    };
    let file_name = file
        .as_ref()
        .map_or_else(|| Arc::from(""), |f| f.file_name.clone());
    let (node, created_node) = tree::lookup_or_insert(
        key,
        NewNode {
            kind: open.kind,
            file: file.clone(),
            file_name,
            path: &path,
            anonymous,
        },
    );
    // A node found for an object just created is a deleted object's, whose token HDF5 gave
    // to this one (deleted while open, then closed and parked). A chunked dataset found
    // parked but opened again with another chunk cache: the cache is a property of the
    // open (its DAPL). Either way the parked node's life ends here (its row is written)
    // and this open starts a new one.
    let other_cache = || {
        let chunked = open.kind == Kind::Dataset
            && node
                .shape
                .lock()
                .as_ref()
                .is_some_and(|s| s.layout == "chunked");
        // The DAPL is read outside the node's lock (no HDF5 call under it).
        // SAFETY: the DAPL of this open call, or -1.
        chunked && {
            let cache = unsafe { chunk_cache(open.dapl) };
            node.shape.lock().as_ref().is_some_and(|s| s.cache != cache)
        }
    };
    let (node, created_node) = if !created_node && (open.created || other_cache()) {
        let (key, file, file_name) = (node.key.clone(), node.file.clone(), node.file_name.clone());
        match tree::end_parked(node, &mut crate::trace::object_summary) {
            Ok(()) => tree::lookup_or_insert(
                key,
                NewNode {
                    kind: open.kind,
                    file,
                    file_name,
                    path: &path,
                    anonymous,
                },
            ),
            // Open elsewhere too: one node for both opens, as for any concurrent ones.
            Err(node) => (node, false),
        }
    } else {
        (node, created_node)
    };
    node.note_open(open.created);
    if matches!(open.kind, Kind::Dataset | Kind::Attr) && created_node {
        // A dataset seen before in this file reuses its cached shape.
        let token = match &node.key {
            Key::Object(_, t) if open.kind == Kind::Dataset => Some(*t),
            _ => None,
        };
        let cached = match (&file, token, open.dataset) {
            (Some(f), Some(t), None) => f.shapes.lock().get(&t).cloned(),
            _ => None,
        };
        let shape = match (cached, open.dataset, open.kind) {
            (Some(s), _, _) => Some(s),
            (None, Some((ty, space, dcpl)), _) => Some(shape_from_ids(ty, space, dcpl)),
            (None, None, _) if pending => None,
            // SAFETY: under is a live dataset of connector vol.
            (None, None, Kind::Dataset) => unsafe { dataset_shape(under, vol, open.dxpl) },
            // SAFETY: under is a live attribute of connector vol.
            (None, None, _) => unsafe { attr_shape(under, vol, open.dxpl) },
        };
        let mut shape = shape;
        if let (Some(s), Kind::Dataset) = (&mut shape, open.kind) {
            resolve_alloc_time(s, file.as_ref().is_some_and(|f| f.stats.lock().mpio));
            // Per open, not per file: each open has its own DAPL.
            s.cache = if s.layout == "chunked" {
                // SAFETY: the DAPL of this create/open call, or -1.
                unsafe { chunk_cache(open.dapl) }
            } else {
                Box::from("")
            };
        }
        if let (Some(f), Some(t), Some(s)) = (&file, token, &shape) {
            f.shapes.lock().insert(t, s.clone());
        }
        *node.shape.lock() = shape;
    }
    node
}

//! The MPI-IO property queries, which only a parallel HDF5 exports. They are resolved when
//! present, so the one `libh5prov.so` records transfer modes in a parallel HDF5 and works
//! unchanged in a serial one.
//!
//! Their declarations live in `H5FDmpio.h`/`H5Ppublic.h` behind `H5_HAVE_PARALLEL` (the
//! headers then need `mpi.h`), so they are written here by hand. They take only ids,
//! enums and `bool *`, and have had these signatures since HDF5 1.10 in every line.
//!
//! One more, [`Mpio::H5CX_get_io_xfer_mode`], is HDF5's *private* API-context query (no
//! header declares it for applications; a parallel HDF5 exports it because its other
//! packages call it). It is optional: a parallel HDF5 without it still gets the four public
//! queries.

use crate::abi::common::{herr_t, hid_t};
use std::ffi::{c_uint, c_void, CStr};

/// `H5FD_mpio_xfer_t` (`H5FDmpio.h`).
#[allow(non_camel_case_types)] // HDF5's name, as the generated ABI keeps them
pub type H5FD_mpio_xfer_t = c_uint;
/// Independent transfer (`H5FD_MPIO_INDEPENDENT`).
pub const H5FD_MPIO_INDEPENDENT: H5FD_mpio_xfer_t = 0;
/// Collective transfer (`H5FD_MPIO_COLLECTIVE`).
pub const H5FD_MPIO_COLLECTIVE: H5FD_mpio_xfer_t = 1;

/// The MPI-IO queries of a parallel HDF5. Fields keep the C functions' names, so calls read
/// like C (`(m.H5Pget_dxpl_mpio)(dxpl, &mut mode)`).
#[allow(non_snake_case)]
pub struct Mpio {
    /// `herr_t H5Pget_dxpl_mpio(hid_t dxpl_id, H5FD_mpio_xfer_t *xfer_mode)`
    pub H5Pget_dxpl_mpio: unsafe extern "C" fn(hid_t, *mut H5FD_mpio_xfer_t) -> herr_t,
    /// `herr_t H5Pget_all_coll_metadata_ops(hid_t plist_id, bool *is_collective)`
    pub H5Pget_all_coll_metadata_ops: unsafe extern "C" fn(hid_t, *mut bool) -> herr_t,
    /// `herr_t H5Pget_coll_metadata_write(hid_t plist_id, bool *is_collective)`
    pub H5Pget_coll_metadata_write: unsafe extern "C" fn(hid_t, *mut bool) -> herr_t,
    /// `hid_t H5FD_mpio_init(void)`: the MPI-IO driver's id.
    pub H5FD_mpio_init: unsafe extern "C" fn() -> hid_t,
    /// `herr_t H5CX_get_io_xfer_mode(H5FD_mpio_xfer_t *io_xfer_mode)` (private, `H5CXprivate.h`,
    /// the same in 1.14 and 2.x): the transfer mode of the *current API call*, which
    /// HDF5's data I/O switches from collective to independent (`H5D__ioinfo_adjust` in
    /// `H5Dio.c`) when it cannot do the requested collective transfer. Only meaningful
    /// inside an API call that has a DXPL (a dataset read/write callback), never with the
    /// default DXPL (the function asserts that).
    pub H5CX_get_io_xfer_mode: Option<unsafe extern "C" fn(*mut H5FD_mpio_xfer_t) -> herr_t>,
}

impl Mpio {
    /// Resolves the four public queries, or none (a serial HDF5), and the private context
    /// query when present.
    ///
    /// # Safety
    /// `sym` must return addresses from one HDF5 library.
    pub unsafe fn load(sym: &mut dyn FnMut(&CStr) -> *mut c_void) -> Option<Mpio> {
        let a = sym(c"H5Pget_dxpl_mpio");
        let b = sym(c"H5Pget_all_coll_metadata_ops");
        let c = sym(c"H5Pget_coll_metadata_write");
        let d = sym(c"H5FD_mpio_init");
        if [a, b, c, d].iter().any(|p| p.is_null()) {
            return None;
        }
        let e = sym(c"H5CX_get_io_xfer_mode");
        // SAFETY: the symbols of a parallel HDF5, with the signatures documented above.
        unsafe {
            Some(Mpio {
                H5Pget_dxpl_mpio: std::mem::transmute::<
                    *mut c_void,
                    unsafe extern "C" fn(hid_t, *mut H5FD_mpio_xfer_t) -> herr_t,
                >(a),
                H5Pget_all_coll_metadata_ops: std::mem::transmute::<
                    *mut c_void,
                    unsafe extern "C" fn(hid_t, *mut bool) -> herr_t,
                >(b),
                H5Pget_coll_metadata_write: std::mem::transmute::<
                    *mut c_void,
                    unsafe extern "C" fn(hid_t, *mut bool) -> herr_t,
                >(c),
                H5FD_mpio_init: std::mem::transmute::<*mut c_void, unsafe extern "C" fn() -> hid_t>(
                    d,
                ),
                H5CX_get_io_xfer_mode: (!e.is_null()).then(|| {
                    std::mem::transmute::<
                        *mut c_void,
                        unsafe extern "C" fn(*mut H5FD_mpio_xfer_t) -> herr_t,
                    >(e)
                }),
            })
        }
    }
}

//! The MPI-IO property queries, which only a parallel HDF5 exports. They are resolved when
//! present, so the one `libh5prov.so` records transfer modes in a parallel HDF5 and works
//! unchanged in a serial one.
//!
//! Their declarations live in `H5FDmpio.h`/`H5Ppublic.h` behind `H5_HAVE_PARALLEL` (the
//! headers then need `mpi.h`), so they are written here by hand. They take only ids,
//! enums and `bool *`, and have had these signatures since HDF5 1.10 in every line.

use crate::abi::common::{herr_t, hid_t};
use std::ffi::{c_uint, c_void, CStr};

/// `H5FD_mpio_xfer_t` (`H5FDmpio.h`).
pub type H5FD_mpio_xfer_t = c_uint;
/// Independent transfer (`H5FD_MPIO_INDEPENDENT`).
pub const H5FD_MPIO_INDEPENDENT: H5FD_mpio_xfer_t = 0;
/// Collective transfer (`H5FD_MPIO_COLLECTIVE`).
pub const H5FD_MPIO_COLLECTIVE: H5FD_mpio_xfer_t = 1;

/// The MPI-IO queries of a parallel HDF5.
pub struct Mpio {
    /// `herr_t H5Pget_dxpl_mpio(hid_t dxpl_id, H5FD_mpio_xfer_t *xfer_mode)`
    pub H5Pget_dxpl_mpio: unsafe extern "C" fn(hid_t, *mut H5FD_mpio_xfer_t) -> herr_t,
    /// `herr_t H5Pget_all_coll_metadata_ops(hid_t plist_id, bool *is_collective)`
    pub H5Pget_all_coll_metadata_ops: unsafe extern "C" fn(hid_t, *mut bool) -> herr_t,
    /// `herr_t H5Pget_coll_metadata_write(hid_t plist_id, bool *is_collective)`
    pub H5Pget_coll_metadata_write: unsafe extern "C" fn(hid_t, *mut bool) -> herr_t,
    /// `hid_t H5FD_mpio_init(void)`: the MPI-IO driver's id.
    pub H5FD_mpio_init: unsafe extern "C" fn() -> hid_t,
}

impl Mpio {
    /// Resolves all four, or none (a serial HDF5).
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
        // SAFETY: the symbols of a parallel HDF5, with the signatures documented above.
        unsafe {
            Some(Mpio {
                H5Pget_dxpl_mpio: std::mem::transmute::<*mut c_void, _>(a),
                H5Pget_all_coll_metadata_ops: std::mem::transmute::<*mut c_void, _>(b),
                H5Pget_coll_metadata_write: std::mem::transmute::<*mut c_void, _>(c),
                H5FD_mpio_init: std::mem::transmute::<*mut c_void, _>(d),
            })
        }
    }
}

//! The class struct and the two plugin entry points HDF5 looks for.

use super::table::fill_class;
use h5prov_bindings::{H5PL_type_t, H5VL_class_t, H5PL_TYPE_VOL, H5VL_VERSION};
use std::ffi::c_void;
use std::sync::LazyLock;

/// h5prov's connector value. Values 256–511 are HDF5's range for connectors that are not
/// registered with The HDF Group ("for testing"); 416 is ours. Use it in
/// `under_vol=416` to stack another connector over h5prov.
pub const H5PROV_VALUE: i32 = 416;

/// h5prov's connector name, as used in `HDF5_VOL_CONNECTOR="h5prov ..."`.
pub const H5PROV_NAME: &std::ffi::CStr = c"h5prov";

/// The class struct, at a stable address. It holds raw pointers (function pointers and the
/// name), so it is not `Sync` by itself.
#[repr(transparent)]
pub struct Class(pub H5VL_class_t);

// SAFETY: the struct is built once and never mutated; it holds only function pointers and a
// pointer to a 'static C string. HDF5 copies it when it registers the connector.
unsafe impl Sync for Class {}
// SAFETY: as above.
unsafe impl Send for Class {}

/// The class, built once from the callback table.
pub static CLASS: LazyLock<Class> = LazyLock::new(|| {
    let mut c = H5VL_class_t {
        version: H5VL_VERSION,
        value: H5PROV_VALUE,
        name: H5PROV_NAME.as_ptr(),
        conn_version: 1,
        // Like HDF5's pass_through: no capabilities of our own; get_cap_flags ORs these
        // into the under connector's.
        cap_flags: 0,
        ..H5VL_class_t::default()
    };
    c.info_cls.size = std::mem::size_of::<super::custom::Info>();
    fill_class(&mut c);
    Class(c)
});

/// Pointer to the class struct.
pub fn class_ptr() -> *const H5VL_class_t {
    &CLASS.0
}

/// Emits `H5PLget_plugin_type` and `H5PLget_plugin_info` for a VOL connector class.
///
/// HDF5's loading rule (`H5PL__open`): it `dlopen`s every `lib*.so` in `HDF5_PLUGIN_PATH`,
/// calls `H5PLget_plugin_type`, and for a VOL plugin calls `H5PLget_plugin_info` and
/// compares the class's name or value with the one it looks for. It does so also when it
/// searches for filters or other connectors, so neither function may have side effects:
/// they touch no thread-locals and call no HDF5 function.
///
/// # Safety
/// `$class` must evaluate to a `*const H5VL_class_t` valid for the life of the library.
macro_rules! hdf5_vol_plugin {
    ($class:expr) => {
        /// HDF5 plugin entry point: this library is a VOL connector.
        #[no_mangle]
        pub extern "C" fn H5PLget_plugin_type() -> H5PL_type_t {
            H5PL_TYPE_VOL
        }

        /// HDF5 plugin entry point: the connector class.
        #[no_mangle]
        pub extern "C" fn H5PLget_plugin_info() -> *const c_void {
            // Building the class cannot panic (no allocation besides the LazyLock).
            $class.cast()
        }
    };
}

hdf5_vol_plugin!(class_ptr());

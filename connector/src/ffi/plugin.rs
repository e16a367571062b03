//! The class struct and the two plugin entry points HDF5 looks for.

use super::table::fill_class;
use h5prov_bindings::{H5PL_type_t, H5VL_class_t, H5PL_TYPE_ERROR, H5PL_TYPE_VOL, H5VL_VERSION};
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
    c.info_cls.size = std::mem::size_of::<super::callbacks::Info>();
    fill_class(&mut c);
    Class(c)
});

/// Pointer to the class struct.
pub fn class_ptr() -> *const H5VL_class_t {
    &CLASS.0
}

/// Binds to the HDF5 library that is loading h5prov and returns the class, or reports why
/// not (on that library's error stack when it is known, else on stderr) and returns NULL:
/// HDF5 then fails to load the connector and carries on without it. A second HDF5 in the
/// process gets a private copy of h5prov bound to it.
pub fn plugin_info() -> *const H5VL_class_t {
    use h5prov_bindings::loader::{self, Binding};
    // The entry point's guard catches any panic too; this catch also says on stderr that
    // h5prov is not registered.
    let r = std::panic::catch_unwind(|| match loader::bind_to_caller() {
        Ok(Binding::Bound(_)) => Ok(class_ptr()),
        Ok(Binding::Other { caller, .. }) => match loader::load_private_copy() {
            Ok(cls) => Ok(cls.cast()),
            Err(message) => Err(loader::BindError {
                message,
                caller: Some(caller),
            }),
        },
        Err(e) => Err(e),
    });
    match r {
        Ok(Ok(cls)) => cls,
        Ok(Err(e)) => {
            let pushed = e
                .caller
                .as_ref()
                .is_some_and(|c| loader::push_error_to(c, &e.message));
            if !pushed {
                eprintln!("{}", e.message);
            }
            std::ptr::null()
        }
        Err(_) => {
            eprintln!("h5prov: internal error (panic) while binding to HDF5; not registered");
            std::ptr::null()
        }
    }
}

/// Emits `H5PLget_plugin_type` and `H5PLget_plugin_info` for a VOL connector class.
///
/// HDF5's loading rule (`H5PL__open`): it `dlopen`s every `lib*.so` in `HDF5_PLUGIN_PATH`,
/// calls `H5PLget_plugin_type`, and for a VOL plugin calls `H5PLget_plugin_info` and
/// compares the class's name or value with the one it looks for. It does so also when it
/// searches for filters or other connectors, so `H5PLget_plugin_type` has no side effects.
/// `H5PLget_plugin_info` binds h5prov to the calling HDF5 (once per process; see
/// `h5prov_bindings::loader`) and touches no thread-locals.
///
/// # Safety
/// `$info` must evaluate to a `*const H5VL_class_t` valid for the life of the library, or
/// NULL.
macro_rules! hdf5_vol_plugin {
    ($info:expr) => {
        /// HDF5 plugin entry point: this library is a VOL connector.
        #[no_mangle]
        pub extern "C" fn H5PLget_plugin_type() -> H5PL_type_t {
            $crate::ffi::guard_unwind(H5PL_TYPE_ERROR, || H5PL_TYPE_VOL)
        }

        /// HDF5 plugin entry point: the connector class, or NULL when h5prov cannot bind to
        /// the HDF5 that loads it.
        #[no_mangle]
        pub extern "C" fn H5PLget_plugin_info() -> *const c_void {
            $crate::ffi::guard_unwind(std::ptr::null(), || $info.cast())
        }
    };
}

hdf5_vol_plugin!(plugin_info());

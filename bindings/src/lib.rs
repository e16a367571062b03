//! The HDF5 VOL ABI of every HDF5 line h5prov supports, and the HDF5 symbols it calls,
//! resolved at run time from the HDF5 library that loaded it.
//!
//! This is the only crate of h5prov with `extern` blocks (the unwinder, in [`loader`]).
//! Nothing here links `libhdf5`, and building needs neither HDF5 nor libclang:
//! - [`abi::v1_14`] and [`abi::v2`]: bindgen's output over the real headers of HDF5 1.14.5
//!   and 2.2.0 (2.0 and 2.1 have the same VOL headers), with bindgen's compile-time layout
//!   assertions; committed, regenerated and compared by `bindings/abigen`'s test, which also
//!   checks them against gcc with a C probe;
//! - [`abi::common`] (re-exported at the root): every item that is identical in both lines.
//!   The connector compiles against these; what differs (`abi/DIFFERENCES.md`) it takes from
//!   the line [`loader`] detected;
//! - [`abi::api`](mod@abi::api) (re-exported at the root): the functions and globals h5prov uses, as a
//!   typed table [`Api`] filled by [`loader`], and a free function per C function that
//!   calls through it, so callers read like C (`H5VLfile_open(...)`).
//!
//! ABI notes (both lines: `H5VL_VERSION` 3, `uint64_t cap_flags`, multi-dataset read/write):
//! `H5P_DEFAULT` and `H5E_DEFAULT` come through bindgen as `u32`: use [`H5P_DEFAULT_ID`].

/// The generated ABI modules. bindgen's names, unused items and style are its own, so the
/// lints are off here only: the hand-written [`loader`] and [`mpio`] are linted in full.
pub mod abi {
    #![allow(
        missing_docs,
        non_camel_case_types,
        non_snake_case,
        non_upper_case_globals,
        dead_code,
        unused_imports,
        clippy::all,
        clippy::pedantic,
        rustdoc::all,
        unsafe_op_in_unsafe_fn
    )]
    // Generated files stay byte-for-byte as h5prov-abigen wrote them (its test compares).
    #[rustfmt::skip]
    pub mod api;
    #[rustfmt::skip]
    pub mod common;
    #[rustfmt::skip]
    pub mod v1_14;
    #[rustfmt::skip]
    pub mod v2;

    /// The bound table (see [`crate::loader::api`]).
    #[inline]
    pub fn api() -> &'static api::Api {
        crate::loader::api()
    }
}
pub mod loader;
pub mod mpio;

pub use abi::api::*;
pub use abi::common::*;

/// `H5P_DEFAULT` as an `hid_t`.
pub const H5P_DEFAULT_ID: hid_t = 0;
/// `H5E_DEFAULT` as an `hid_t`.
pub const H5E_DEFAULT_ID: hid_t = 0;

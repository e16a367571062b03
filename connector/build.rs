//! Link flags for the plugin. `libh5prov.so` links no libhdf5: every HDF5 symbol is
//! resolved at run time from the HDF5 that loaded it (`h5prov_bindings::loader`).
//! `--no-undefined` keeps it so: a direct reference to any HDF5 symbol fails the link.
fn main() {
    println!("cargo:rustc-cdylib-link-arg=-Wl,--no-undefined");
    println!("cargo:rerun-if-changed=build.rs");
}

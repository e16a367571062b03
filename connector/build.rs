//! Link flags for the plugin: every HDF5 symbol must resolve at `dlopen` (rustc links
//! cdylibs with immediate binding), and the plugin records `DT_NEEDED libhdf5.so.*` so it
//! works in hosts that loaded HDF5 with `RTLD_LOCAL` (Python extension modules).
fn main() {
    println!("cargo:rustc-cdylib-link-arg=-Wl,--no-undefined");
    println!("cargo:rerun-if-changed=build.rs");
}

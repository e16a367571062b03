//! Link flags for the plugin: every HDF5 symbol must resolve at `dlopen` (rustc links
//! cdylibs with immediate binding), and the plugin records `DT_NEEDED libhdf5.so.*` so it
//! works in hosts that loaded HDF5 with `RTLD_LOCAL` (Python extension modules).
fn main() {
    println!("cargo:rustc-cdylib-link-arg=-Wl,--no-undefined");
    // Built against a parallel HDF5: record MPI-IO transfer modes and collective metadata.
    println!("cargo::rustc-check-cfg=cfg(h5prov_parallel)");
    if std::env::var_os("DEP_H5PROV_VOL_ABI_HAVE_PARALLEL").is_some() {
        println!("cargo:rustc-cfg=h5prov_parallel");
    }
    println!("cargo:rerun-if-changed=build.rs");
}

//! Generates the HDF5 VOL ABI from the headers of the HDF5 we link against, and compiles a C
//! probe that reports the sizes and field offsets gcc sees for the same structs.
//!
//! The HDF5 installation is the one `hdf5-metno-sys` found (`DEP_HDF5_INCLUDE`, from
//! `HDF5_DIR`), so the bindings, the link and the runtime library agree.

use std::env;
use std::fmt::Write as _;
use std::path::PathBuf;

/// Structs whose layout must agree with the C compiler: (struct, fields checked by offset).
/// `layout.rs` tests every entry; a mis-declared field fails the build's tests.
const LAYOUT: &[(&str, &[&str])] = &[
    (
        "H5VL_class_t",
        &[
            "version",
            "value",
            "name",
            "conn_version",
            "cap_flags",
            "initialize",
            "terminate",
            "info_cls",
            "wrap_cls",
            "attr_cls",
            "dataset_cls",
            "datatype_cls",
            "file_cls",
            "group_cls",
            "link_cls",
            "object_cls",
            "introspect_cls",
            "request_cls",
            "blob_cls",
            "token_cls",
            "optional",
        ],
    ),
    (
        "H5VL_info_class_t",
        &["size", "copy", "cmp", "free", "to_str", "from_str"],
    ),
    (
        "H5VL_wrap_class_t",
        &[
            "get_object",
            "get_wrap_ctx",
            "wrap_object",
            "unwrap_object",
            "free_wrap_ctx",
        ],
    ),
    (
        "H5VL_attr_class_t",
        &[
            "create", "open", "read", "write", "get", "specific", "optional", "close",
        ],
    ),
    (
        "H5VL_dataset_class_t",
        &[
            "create", "open", "read", "write", "get", "specific", "optional", "close",
        ],
    ),
    (
        "H5VL_datatype_class_t",
        &["commit", "open", "get", "specific", "optional", "close"],
    ),
    (
        "H5VL_file_class_t",
        &["create", "open", "get", "specific", "optional", "close"],
    ),
    (
        "H5VL_group_class_t",
        &["create", "open", "get", "specific", "optional", "close"],
    ),
    (
        "H5VL_link_class_t",
        &["create", "copy", "move_", "get", "specific", "optional"],
    ),
    (
        "H5VL_object_class_t",
        &["open", "copy", "get", "specific", "optional"],
    ),
    (
        "H5VL_introspect_class_t",
        &["get_conn_cls", "get_cap_flags", "opt_query"],
    ),
    (
        "H5VL_request_class_t",
        &["wait", "notify", "cancel", "specific", "optional", "free"],
    ),
    ("H5VL_blob_class_t", &["put", "get", "specific", "optional"]),
    ("H5VL_token_class_t", &["cmp", "to_str", "from_str"]),
    ("H5VL_loc_params_t", &["obj_type", "type_", "loc_data"]),
    ("H5VL_optional_args_t", &["op_type", "args"]),
    ("H5VL_attr_get_args_t", &["op_type", "args"]),
    ("H5VL_attr_specific_args_t", &["op_type", "args"]),
    ("H5VL_dataset_get_args_t", &["op_type", "args"]),
    ("H5VL_dataset_specific_args_t", &["op_type", "args"]),
    ("H5VL_datatype_get_args_t", &["op_type", "args"]),
    ("H5VL_datatype_specific_args_t", &["op_type", "args"]),
    ("H5VL_file_get_args_t", &["op_type", "args"]),
    ("H5VL_file_specific_args_t", &["op_type", "args"]),
    ("H5VL_group_get_args_t", &["op_type", "args"]),
    ("H5VL_group_specific_args_t", &["op_type", "args"]),
    ("H5VL_link_create_args_t", &["op_type", "args"]),
    ("H5VL_link_get_args_t", &["op_type", "args"]),
    ("H5VL_link_specific_args_t", &["op_type", "args"]),
    ("H5VL_object_get_args_t", &["op_type", "args"]),
    ("H5VL_object_specific_args_t", &["op_type", "args"]),
    ("H5VL_request_specific_args_t", &["op_type", "args"]),
    ("H5VL_blob_specific_args_t", &["op_type", "args"]),
    ("H5O_token_t", &["__data"]),
];

fn c_field(f: &str) -> &str {
    // bindgen renames C fields that are Rust keywords (`type`, `move`) with a trailing `_`.
    f.strip_suffix('_').unwrap_or(f)
}

fn main() {
    let include = env::var("DEP_HDF5_INCLUDE")
        .expect("hdf5-metno-sys did not report an include directory (is HDF5_DIR set?)");
    let out = PathBuf::from(env::var("OUT_DIR").unwrap());
    println!("cargo:rerun-if-changed=wrapper.h");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=HDF5_DIR");
    println!("cargo:include={include}");

    // A parallel HDF5 (hdf5-metno-sys found H5_HAVE_PARALLEL): its headers include mpi.h,
    // and the MPI-IO property functions exist. Tell our code and the connector.
    println!("cargo::rustc-check-cfg=cfg(h5prov_parallel)");
    let parallel = env::var_os("DEP_HDF5_HAVE_PARALLEL").is_some();
    let mut mpi_flags: Vec<String> = Vec::new();
    if parallel {
        println!("cargo:rustc-cfg=h5prov_parallel");
        println!("cargo:have_parallel=1");
        let out = std::process::Command::new("mpicc")
            .arg("--showme:compile")
            .output()
            .expect("parallel HDF5 needs mpicc (openmpi-bin) to find mpi.h");
        mpi_flags = String::from_utf8_lossy(&out.stdout)
            .split_whitespace()
            .map(str::to_string)
            .collect();
    }

    let bindings = bindgen::Builder::default()
        .header("wrapper.h")
        .clang_arg(format!("-I{include}"))
        .clang_args(&mpi_flags)
        // Only what the headers in the HDF5 include directory declare.
        .allowlist_file(format!("{include}/.*"))
        .allowlist_item("H5VL.*|H5PL.*|H5O_token_t|H5E_.*|H5I_.*|H5S_.*|H5D_.*|H5F_.*|H5FD_.*")
        // MPI-IO transfer properties (declared only by parallel builds).
        .allowlist_function(
            "H5Pget_dxpl_mpio|H5Pget_mpio_actual_io_mode|H5Pget_all_coll_metadata_ops|H5Pget_coll_metadata_write|H5Pget_driver|H5FD_mpio_init",
        )
        // We define these two entry points ourselves.
        .blocklist_function("H5PLget_plugin_type|H5PLget_plugin_info")
        // C may pass enum values a Rust enum cannot hold.
        .default_enum_style(bindgen::EnumVariation::Consts)
        .prepend_enum_name(false)
        .derive_default(true)
        .derive_debug(false)
        .layout_tests(true)
        .generate_comments(false)
        .parse_callbacks(Box::new(bindgen::CargoCallbacks::new()))
        .generate()
        .expect("bindgen could not generate the VOL ABI from the HDF5 headers");
    bindings
        .write_to_file(out.join("vol_abi.rs"))
        .expect("write vol_abi.rs");

    // The C probe: one array of sizes and offsets as gcc sees them.
    let mut c =
        String::from("#include \"hdf5.h\"\n#include \"H5VLconnector.h\"\n#include <stddef.h>\n");
    let mut rs = String::from("/// (item, value as the Rust bindings see it), in probe order.\n");
    rs.push_str("pub fn rust_layout() -> Vec<(&'static str, usize)> {\n    vec![\n");
    c.push_str("const size_t h5prov_layout_probe[] = {\n");
    let mut n = 0usize;
    for (ty, fields) in LAYOUT {
        writeln!(c, "    sizeof({ty}),").unwrap();
        writeln!(
            rs,
            "        (\"sizeof({ty})\", ::core::mem::size_of::<crate::{ty}>()),"
        )
        .unwrap();
        n += 1;
        for f in *fields {
            writeln!(c, "    offsetof({ty}, {}),", c_field(f)).unwrap();
            writeln!(
                rs,
                "        (\"{ty}.{f}\", ::core::mem::offset_of!(crate::{ty}, {f})),"
            )
            .unwrap();
            n += 1;
        }
    }
    c.push_str("};\n");
    writeln!(c, "const size_t h5prov_layout_probe_len = {n};").unwrap();
    rs.push_str("    ]\n}\n");
    std::fs::write(out.join("layout_probe.c"), c).unwrap();
    std::fs::write(out.join("layout_rust.rs"), rs).unwrap();
    let mut probe = cc::Build::new();
    for f in &mpi_flags {
        probe.flag(f);
    }
    probe
        .file(out.join("layout_probe.c"))
        .include(&include)
        .warnings(false)
        .compile("h5prov_layout_probe");
}

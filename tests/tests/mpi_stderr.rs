//! Under MPI, h5prov prints nothing into the application's stderr: no HDF5 call h5prov makes
//! for its own purposes may fail visibly. Every traced attribute read used to print a full
//! HDF5-DIAG stack ("H5Pget_dxpl_mpio(): not a dxpl").
//!
//! Needs the parallel HDF5 (`hdf5-test-harness build-hdf5 --variant parallel`, which also
//! installs OpenMPI).

use h5prov_tests::{
    compile_c, describe_output, plugin_dir, read_metas, read_records, repo, scratch,
};
use std::path::PathBuf;
use std::process::{Command, Output};

fn parallel_hdf5() -> PathBuf {
    let p = repo().join(".deps/hdf5-parallel");
    std::fs::canonicalize(&p).unwrap_or_else(|e| {
        panic!(
            "parallel HDF5 not found at {} ({e}): run `cargo run -p hdf5-test-harness -- \
             build-hdf5 --variant parallel`",
            p.display()
        )
    })
}

fn program() -> PathBuf {
    compile_c("mpicc", "mpi_attrs", Some(&parallel_hdf5()), &[])
}

fn mpirun(exe: &PathBuf, dir: &PathBuf, conn: Option<&str>) -> Output {
    let mut c = Command::new("mpirun");
    // The parallel HDF5 first: the scripts export the serial one's LD_LIBRARY_PATH, which
    // takes precedence over the program's RUNPATH.
    let lib = parallel_hdf5().join("lib");
    c.args(["-np", "2", "--oversubscribe", "-x", "LD_LIBRARY_PATH"])
        .current_dir(dir)
        .env("LD_LIBRARY_PATH", &lib)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env_remove("HDF5_VOL_CONNECTOR")
        .env_remove("HDF5_PLUGIN_PATH");
    if let Some(conn) = conn {
        c.env("HDF5_PLUGIN_PATH", plugin_dir())
            .env("HDF5_VOL_CONNECTOR", conn)
            .args(["-x", "HDF5_PLUGIN_PATH", "-x", "HDF5_VOL_CONNECTOR"]);
    }
    c.arg(exe).args(["f.h5", "200"]);
    c.output().expect("run mpirun")
}

#[test]
fn a_traced_mpi_run_prints_what_the_native_run_prints() {
    let exe = program();
    let dir = scratch("mpi-stderr");
    let native = mpirun(&exe, &dir, None);
    assert!(
        native.status.success(),
        "{}",
        describe_output("native", &native)
    );
    let traces = dir.join("traces");
    let conn = format!(
        "h5prov under_vol=0;under_info={{}};path={};level=dataset",
        traces.display()
    );
    let traced = mpirun(&exe, &dir, Some(&conn));
    assert!(
        traced.status.success(),
        "{}",
        describe_output("traced", &traced)
    );
    assert_eq!(
        String::from_utf8_lossy(&traced.stderr),
        String::from_utf8_lossy(&native.stderr),
        "stderr differs"
    );
    // Proof h5prov ran in both ranks, and traced the attribute reads.
    assert_eq!(read_metas(&traces).len(), 2);
    let reads = read_records(&traces)
        .iter()
        .filter(|r| r.op == "attr.read")
        .count();
    // Every rank reads every rank's 200 attributes.
    assert_eq!(reads, 2 * 2 * 200);
}

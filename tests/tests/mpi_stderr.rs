//! Under MPI, h5prov prints nothing into the application's stderr: no HDF5 call h5prov makes
//! for its own purposes may fail visibly. Every traced attribute read used to print a full
//! HDF5-DIAG stack ("H5Pget_dxpl_mpio(): not a dxpl").
//!
//! Needs the parallel HDF5 (`hdf5-test-harness build-hdf5 --variant parallel`, which also
//! installs OpenMPI).

use h5prov_tests::{
    compile_c, describe_output, mpirun, parallel_hdf5, read_metas, read_records, scratch,
};
use std::path::PathBuf;

fn program() -> PathBuf {
    compile_c("mpicc", "mpi_attrs", Some(&parallel_hdf5()), &[])
}

#[test]
fn a_traced_mpi_run_prints_what_the_native_run_prints() {
    let exe = program();
    let dir = scratch("mpi-stderr");
    let native = mpirun(&exe, 2, &["f.h5", "200"], &dir, None);
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
    let traced = mpirun(&exe, 2, &["f.h5", "200"], &dir, Some(&conn));
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

//! Broken collective I/O: a transfer the application asks to be collective and parallel
//! HDF5 performs independently (a data transform without selection I/O, a compact dataset,
//! a multi-dataset write with a compact member). h5prov's `xfer_actual` and the objects'
//! `broken_coll_io` must say what HDF5 itself reports after the call
//! (`H5Pget_mpio_actual_io_mode`), and loading h5prov must change none of HDF5's decisions.
//!
//! Needs the parallel HDF5 (`hdf5-test-harness build-hdf5 --variant parallel`, which also
//! installs OpenMPI).

use h5prov_tests::{
    compile_c, describe_output, mpirun, parallel_hdf5, read_metas, read_objects, read_records,
    scratch, tool,
};
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

const RANKS: usize = 4;

/// One `io RANK OP DATASET MODE CAUSE` line of the program: what HDF5 reported after a
/// transfer.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Reported {
    rank: i64,
    op: String,
    dset: String,
    mode: String,
    cause: u32,
}

fn reported(stdout: &[u8]) -> Vec<Reported> {
    let mut v: Vec<Reported> = String::from_utf8_lossy(stdout)
        .lines()
        .filter_map(|l| l.strip_prefix("io "))
        .map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            assert_eq!(f.len(), 5, "bad line {l:?}");
            Reported {
                rank: f[0].parse().unwrap(),
                op: f[1].to_string(),
                dset: f[2].to_string(),
                mode: f[3].to_string(),
                cause: u32::from_str_radix(f[4].trim_start_matches("0x"), 16).unwrap(),
            }
        })
        .collect();
    // The ranks' lines interleave: each rank's in its order.
    v.sort_by_key(|r| r.rank);
    v
}

fn h5dump(dir: &Path) -> String {
    let out = Command::new(tool("h5dump"))
        .arg("f.h5")
        .current_dir(dir)
        .output()
        .expect("run h5dump");
    assert!(out.status.success(), "{}", describe_output("h5dump", &out));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Per dataset: (transfers HDF5 did collectively, transfers it reported as
/// `no_collective`).
fn count_reports(rep: &[Reported]) -> BTreeMap<&str, (u64, u64)> {
    let mut m = BTreeMap::new();
    for r in rep {
        let e = m.entry(r.dset.as_str()).or_insert((0, 0));
        if r.mode == "no_collective" {
            e.1 += 1;
        } else {
            e.0 += 1;
        }
    }
    m
}

#[test]
fn broken_collective_transfers_are_counted_as_hdf5_reports_them() {
    let exe = compile_c("mpicc", "mpi_broken_coll", Some(&parallel_hdf5()), &[]);
    let root = scratch("mpi-broken-coll");
    let (native_dir, traced_dir) = (root.join("native"), root.join("traced"));
    std::fs::create_dir_all(&native_dir).unwrap();
    std::fs::create_dir_all(&traced_dir).unwrap();

    let native = mpirun(&exe, RANKS, &["f.h5"], &native_dir, None);
    assert!(
        native.status.success(),
        "{}",
        describe_output("native", &native)
    );
    let traces = root.join("traces");
    let conn = format!(
        "h5prov under_vol=0;under_info={{}};path={};level=dataset",
        traces.display()
    );
    let traced = mpirun(&exe, RANKS, &["f.h5"], &traced_dir, Some(&conn));
    assert!(
        traced.status.success(),
        "{}",
        describe_output("traced", &traced)
    );
    // h5prov ran in every rank.
    assert_eq!(
        read_metas(&traces).len(),
        RANKS,
        "h5prov was not loaded in every rank"
    );

    // Loading h5prov changes none of HDF5's decisions, nor the file.
    let rep = reported(&traced.stdout);
    assert_eq!(
        rep,
        reported(&native.stdout),
        "HDF5 decided differently under h5prov"
    );
    assert_eq!(h5dump(&traced_dir), h5dump(&native_dir), "the files differ");
    eprintln!("HDF5 reports (rank op dataset mode global-cause), rank 0 of the traced run:");
    for r in rep.iter().filter(|r| r.rank == 0) {
        eprintln!("  {} {} {} {} {:#x}", r.rank, r.op, r.dset, r.mode, r.cause);
    }

    // The skipped read (no storage, fill values) is the exception: HDF5 resets the DXPL's
    // actual mode to no_collective and leaves the cause of the DXPL's previous transfer, but
    // nothing was transferred, let alone independently. h5prov keeps the requested mode.
    let (unwritten, rest): (Vec<_>, Vec<_>) =
        rep.iter().cloned().partition(|r| r.dset == "unwritten");
    assert_eq!(unwritten.len(), RANKS);
    assert!(
        unwritten
            .iter()
            .all(|r| r.mode == "no_collective" && r.cause != 0),
        "{unwritten:?}"
    );
    let hdf5 = count_reports(&rest);

    let objects = read_objects(&traces);
    let records = read_records(&traces);
    let mut h5prov: BTreeMap<&str, (u64, u64, u64)> = BTreeMap::new();
    for o in objects.iter().filter(|o| o.kind == "dataset") {
        let e = h5prov
            .entry(o.path.trim_start_matches('/'))
            .or_insert((0, 0, 0));
        e.0 += o.ind_io;
        e.1 += o.coll_io;
        e.2 += o.broken_coll_io;
    }
    eprintln!(
        "per dataset: HDF5 (collective, no_collective) vs h5prov (ind_io, coll_io, broken_coll_io)"
    );
    for (d, c) in &h5prov {
        eprintln!("  {d}: {:?} vs {c:?}", hdf5.get(d));
    }
    for (d, &(coll, no_coll)) in &hdf5 {
        assert_eq!(
            h5prov.get(d),
            Some(&(0, coll, no_coll)),
            "{d}: HDF5 reports {coll} collective and {no_coll} no_collective transfers"
        );
    }
    assert_eq!(h5prov.get("unwritten"), Some(&(0, RANKS as u64, 0)));
    // The cases the program sets up: HDF5 1.14 and 2.x break these, keep those.
    for d in ["transform", "compact", "multi_a", "multi_b"] {
        assert!(hdf5[d].1 > 0, "{d}: HDF5 broke no collective transfer");
    }
    assert_eq!(hdf5["control"], (3 * RANKS as u64, 0));

    // Every record of a transfer says what HDF5 did, in the same order per rank.
    let mut by_rank: BTreeMap<(i64, &str, &str), Vec<&str>> = BTreeMap::new();
    for r in records
        .iter()
        .filter(|r| r.op == "dataset.write" || r.op == "dataset.read")
    {
        assert_eq!(r.xfer, "collective", "{r:?}");
        let op = r.op.trim_start_matches("dataset.");
        by_rank
            .entry((r.rank, op, r.path.trim_start_matches('/')))
            .or_default()
            .push(r.xfer_actual.as_str());
    }
    let mut want: BTreeMap<(i64, &str, &str), Vec<&str>> = BTreeMap::new();
    for r in &rep {
        let actual = match (r.dset.as_str(), r.mode.as_str()) {
            ("unwritten", _) => "collective",
            (_, "no_collective") => "independent",
            _ => "collective",
        };
        want.entry((r.rank, r.op.as_str(), r.dset.as_str()))
            .or_default()
            .push(actual);
    }
    assert_eq!(by_rank, want);
}

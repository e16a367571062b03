//! What lineage needs of a file (issue 34, item 1), at every level including `summary`:
//! per process, the file's device and inode, its size and mtime when the process opened it
//! and when it last closed it, and how it opened it (`tests/c/lineage.c` documents the
//! steps). Four jobs on one file (create, read through a symbolic link, rewrite, truncate)
//! must join on the same identity, and each must see the version the one before left.

use h5prov_format::ObjectSummary;
use h5prov_tests::*;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// `stat(2)` of `p`: (dev, ino, size, mtime ns).
fn stat(p: &Path) -> (u64, u64, u64, u64) {
    let m = std::fs::metadata(p).unwrap();
    let mtime = m.mtime() as u64 * 1_000_000_000 + m.mtime_nsec() as u64;
    (m.dev(), m.ino(), m.size(), mtime)
}

/// Runs one step of `lineage.c` under h5prov with `options`; returns the file rows.
fn step(dir: &Path, name: &str, mode: &str, file: &str, options: &str) -> Vec<ObjectSummary> {
    let traces = dir.join(format!("traces-{name}"));
    Run::with_h5prov(&c_program("lineage"), &[mode, file], dir, &traces, options).ok();
    let rows: Vec<_> = read_objects(&traces)
        .into_iter()
        .filter(|o| o.kind == "file")
        .collect();
    assert!(
        !rows.is_empty(),
        "{name}: no file row in {}",
        traces.display()
    );
    rows
}

fn workflow(options: &str, tag: &str) {
    let dir = scratch(&format!("lineage-{tag}"));
    let file = dir.join("sim.h5");
    std::os::unix::fs::symlink("sim.h5", dir.join("alias.h5")).unwrap();

    let created = step(&dir, "create", "create", "sim.h5", options);
    let v1 = stat(&file);
    assert_eq!(created.len(), 1, "{created:?}");
    let c = &created[0];
    assert_eq!(c.intent, "create", "a new file: {c:?}");
    assert_eq!((c.dev, c.ino), (v1.0, v1.1), "identity: {c:?}");
    assert_ne!(c.ino, 0);
    assert_eq!(
        (c.close_size, c.close_mtime_ns),
        (v1.2, v1.3),
        "at close: {c:?}"
    );
    assert_eq!(
        (c.open_size, c.open_mtime_ns),
        (0, 0),
        "no earlier version: {c:?}"
    );

    // Read through another path: the same identity, and the version the create left.
    let read = step(&dir, "read", "read", "alias.h5", options);
    let r = &read[0];
    assert_eq!(r.file, "alias.h5");
    assert_eq!(r.intent, "ro", "{r:?}");
    assert_eq!(
        (r.dev, r.ino),
        (c.dev, c.ino),
        "one file whatever its path: {r:?}"
    );
    assert_eq!(
        (r.open_size, r.open_mtime_ns, r.close_size, r.close_mtime_ns),
        (v1.2, v1.3, v1.2, v1.3),
        "a read-only job sees and leaves the first version: {r:?}"
    );
    assert_eq!(stat(&file), v1, "reading changed the file");

    let rw = step(&dir, "rw", "rw", "sim.h5", options);
    let v2 = stat(&file);
    assert_eq!(rw[0].intent, "rw", "{:?}", rw[0]);
    assert_eq!((rw[0].open_size, rw[0].open_mtime_ns), (v1.2, v1.3));
    assert_eq!((rw[0].close_size, rw[0].close_mtime_ns), (v2.2, v2.3));

    // Two opens one after the other in one process: a row each, with its own intent.
    let twice = step(&dir, "twice", "twice", "sim.h5", options);
    let mut intents: Vec<_> = twice.iter().map(|o| o.intent.as_str()).collect();
    intents.sort_unstable();
    assert_eq!(intents, ["ro", "rw"], "{twice:?}");

    // The simulation again: H5F_ACC_TRUNC over the existing file.
    let before = stat(&file);
    let again = step(&dir, "truncate", "create", "sim.h5", options);
    let v3 = stat(&file);
    let t = &again[0];
    assert_eq!(t.intent, "truncate", "created over an existing file: {t:?}");
    assert_eq!((t.dev, t.ino), (v3.0, v3.1), "{t:?}");
    assert_eq!((t.close_size, t.close_mtime_ns), (v3.2, v3.3), "{t:?}");
    assert_eq!(
        (t.open_size, t.open_mtime_ns),
        (before.2, before.3),
        "the version the truncation destroyed: {t:?}"
    );
    assert!(
        t.close_mtime_ns > c.close_mtime_ns,
        "a new version: {t:?} after {c:?}"
    );
}

#[test]
fn file_identity_versions_and_intent_at_level_summary_bin() {
    workflow("level=summary;format=bin", "summary-bin");
}

#[test]
fn file_identity_versions_and_intent_at_level_dataset_csv() {
    workflow("level=dataset;format=csv", "dataset-csv");
}

//! An object closed and opened again in the same file session goes on counting in its
//! node, and has one summary row: a dataset's twenty attributes read three times over, by
//! `H5Aopen_by_name(obj, ".", name)` (PyTables) and by `H5Aopen`, with one of them deleted
//! and created again between rounds (`tests/c/reopened_attrs.c`). Before, a file kept four
//! closed objects and let them all go at every attribute delete, and an attribute opened
//! by the name `.` had a node of its own: every open was a row.

use h5prov_tests::*;
use std::collections::BTreeMap;

#[test]
fn reopened_attributes_have_one_row_per_attribute_per_file_session() {
    let dir = scratch("reopened");
    let traces = dir.join("t");
    let out = Run::with_h5prov(&c_program("reopened_attrs"), &["r.h5"], &dir, &traces, "").ok();
    assert!(out.contains("done"), "{out}");
    let objs = read_objects(&traces);
    let ctx = format!("traces in {}", traces.display());
    let mut rows = BTreeMap::<(&str, &str), Vec<u64>>::new();
    for o in &objs {
        rows.entry((o.kind.as_str(), o.path.as_str()))
            .or_default()
            .push(o.opens);
    }
    assert_eq!(
        rows.get(&("dataset", "/d")),
        Some(&vec![1]),
        "{rows:?}\n{ctx}"
    );
    for a in 0..19 {
        let path = format!("/d/attr{a:02}");
        // Its create and three reads.
        assert_eq!(
            rows.get(&("attr", path.as_str())),
            Some(&vec![4]),
            "{path}: {rows:?}\n{ctx}"
        );
    }
    // The rewritten one: a new attribute at each create, each with its own row (the create
    // and the next round's read), the last one never read.
    let mut last = rows
        .get(&("attr", "/d/attr19"))
        .cloned()
        .unwrap_or_default();
    last.sort_unstable();
    assert_eq!(last, vec![1, 2, 2, 2], "{rows:?}\n{ctx}");
    assert_eq!(rows.values().map(Vec::len).sum::<usize>(), objs.len());
    assert_eq!(
        objs.len(),
        1 + 1 + 19 + 4,
        "file, dataset, attributes: {rows:?}\n{ctx}"
    );
}

//! Objects HDF5 opens itself for an iteration or a visit (`H5Literate2`, `H5Aiterate2`,
//! `H5Ovisit3` and their `_by_name` forms) and registers through h5prov's `wrap_object` are
//! filed under their own paths: their closes and summary rows, and the opens the
//! application's callback makes relative to the id it is given. Before, they had an empty
//! path, and a dataset opened by name from the callback's group id was filed under the
//! root (`/d1` for `/g/d1`). `tests/c/iterated.c` runs each form.

use h5prov_tests::*;
use std::collections::BTreeMap;

#[test]
fn objects_opened_for_an_iteration_are_filed_under_their_own_paths() {
    let dir = scratch("iterated");
    let traces = dir.join("t");
    let out = Run::with_h5prov(&c_program("iterated"), &["i.h5"], &dir, &traces, "").ok();
    assert!(out.contains("links 4 attrs 6 objects 6"), "{out}");
    let recs = read_records(&traces);
    let objs = read_objects(&traces);
    let ctx = format!("traces in {}", traces.display());

    let objects = ["group", "dataset", "attr", "datatype"];
    let unnamed: Vec<_> = recs
        .iter()
        .filter(|r| objects.contains(&r.kind.as_str()) && r.path.is_empty())
        .map(|r| r.op.as_str())
        .collect();
    assert!(
        unnamed.is_empty(),
        "records with no path: {unnamed:?}\n{ctx}"
    );
    let unnamed_rows: Vec<_> = objs
        .iter()
        .filter(|o| objects.contains(&o.kind.as_str()) && o.path.is_empty())
        .map(|o| o.kind.as_str())
        .collect();
    assert!(
        unnamed_rows.is_empty(),
        "rows with no path: {unnamed_rows:?}\n{ctx}"
    );

    let count = |op: &str| {
        let mut by_path = BTreeMap::<&str, usize>::new();
        for r in recs.iter().filter(|r| r.op == op) {
            *by_path.entry(r.path.as_str()).or_default() += 1;
        }
        by_path
    };
    // The callback's opens are relative to the iterated group, /g, twice over.
    let opens = count("dataset.open");
    assert_eq!(opens.get("/g/d1"), Some(&3), "{opens:?}\n{ctx}"); // and the application's
    assert_eq!(opens.get("/g/d2"), Some(&2), "{opens:?}\n{ctx}");
    assert!(!opens.contains_key("/d1"), "{opens:?}\n{ctx}");
    // /h is closed by the application after its create, and twice by HDF5 after its visit
    // by name (`H5O__visit` registers the group, then `H5G_visit` registers it again); the
    // root group twice after the file's visit.
    let closes = count("group.close");
    assert_eq!(closes.get("/h"), Some(&3), "{closes:?}\n{ctx}");
    assert_eq!(closes.get("/"), Some(&2), "{closes:?}\n{ctx}");
    // /g: the application's two closes (after its create, and after the file is opened
    // again), and HDF5's after the iteration by name. The iteration of the open group
    // shares its node: its close is filed under /g too.
    assert_eq!(closes.get("/g"), Some(&4), "{closes:?}\n{ctx}");
}

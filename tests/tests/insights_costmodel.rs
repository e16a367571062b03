//! The cost model's rules (`analyzer/src/insights/costmodel.rs`) on real HDF5 programs
//! (`tests/c/insights/model_*.c`) traced by h5prov: each rule fires (WARN or HIGH) on its
//! pathology in three runs, no other cost-model rule does, and the fixed variant
//! (`--fixed`) gets nothing at WARN or HIGH. `docs/INSIGHTS.md` ("The cost model")
//! describes the rules.

use h5prov_tests::{fires, insights_of, Found};

const BAD: &[&str] = &["WARN", "HIGH"];

/// The cost model's codes: none may fire at WARN/HIGH on another's fixture.
const MODEL_RULES: &[&str] = &[
    "fill_on_allocation",
    "early_allocation",
    "point_selection",
    "fragmented_selection",
    "extend_per_record",
    "flush_per_write",
    "vlen_strings",
];

fn found(name: &str, args: &[&str]) -> Vec<Found> {
    insights_of(name, args, None, &[])
}

fn serious(f: &[Found]) -> Vec<&str> {
    f.iter()
        .filter(|(_, l)| BAD.contains(&l.as_str()))
        .map(|(c, _)| c.as_str())
        .collect()
}

/// `code` fires at WARN/HIGH on `name` in three runs, with no other cost-model rule at
/// WARN/HIGH; `name --fixed` has nothing at WARN/HIGH.
fn fires_then_quiet(name: &str, code: &str) -> Vec<Found> {
    let first = found(name, &[]);
    for run in 0..3 {
        let f = if run == 0 {
            first.clone()
        } else {
            found(name, &[])
        };
        assert!(
            fires(&f, code, BAD),
            "{name} run {run}: {code} not fired: {f:?}"
        );
        for o in MODEL_RULES.iter().filter(|o| **o != code) {
            assert!(!fires(&f, o, BAD), "{name} run {run}: {o} fired too: {f:?}");
        }
    }
    let fixed = found(name, &["--fixed"]);
    assert!(
        serious(&fixed).is_empty(),
        "{name} --fixed: not clean: {fixed:?}"
    );
    first
}

#[test]
fn fill_on_allocation_fires_on_early_fill_and_not_with_fill_time_never() {
    fires_then_quiet("model_fill", "fill_on_allocation");
}

#[test]
fn fill_on_allocation_follows_the_fill_value_status_with_fill_time_ifset() {
    // IFSET with a fill value of the program's: HDF5 writes it (the objects row's `fill`
    // is `user`).
    let user = found("model_fill", &["--ifset-user"]);
    assert!(fires(&user, "fill_on_allocation", BAD), "{user:?}");
    // IFSET with HDF5's default fill value: nothing is written, nothing to say.
    let default = found("model_fill", &["--ifset-default"]);
    assert!(
        !default.iter().any(|(c, _)| c == "fill_on_allocation"),
        "{default:?}"
    );
}

#[test]
fn point_selection_fires_on_element_lists_and_not_on_hyperslabs() {
    fires_then_quiet("model_points", "point_selection");
}

#[test]
fn fragmented_selection_fires_on_strided_reads_and_not_on_whole_bands() {
    fires_then_quiet("model_frag", "fragmented_selection");
}

#[test]
fn flush_per_write_fires_on_a_flush_per_write() {
    let bad = fires_then_quiet("model_flush", "flush_per_write");
    // The flushes are metadata time too.
    assert!(fires(&bad, "metadata_time", BAD), "{bad:?}");
}

#[test]
fn vlen_strings_fires_on_vlen_strings_and_not_on_fixed_ones() {
    fires_then_quiet("model_vlen", "vlen_strings");
}

/// The row selections of the fixed variants fill their bounding boxes: HDF5 counts a row
/// of 1000 elements selected with block 1 as 1000 blocks, but it is one region.
#[test]
fn whole_rows_are_not_fragmented() {
    for name in ["model_points", "model_flush"] {
        let f = found(name, &["--fixed"]);
        assert!(
            !f.iter().any(|(c, _)| c == "fragmented_selection"),
            "{name} --fixed: {f:?}"
        );
    }
}

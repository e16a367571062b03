//! The dataset-level insights on real HDF5 programs (`tests/c/insights/*.c`) traced by
//! h5prov: each rule fires (WARN or HIGH) on its pathology, is absent or INFO on the
//! fixed variant (`--fixed`), and gives the same findings run after run. The clean
//! control gets nothing at WARN or HIGH. `docs/INSIGHTS.md` describes the rules.

use h5prov_tests::{fires, insights_of, Found};

const BAD: &[&str] = &["WARN", "HIGH"];

/// The findings of `name` (serial) with `args`.
fn found(name: &str, args: &[&str]) -> Vec<Found> {
    insights_of(name, args, None, &[])
}

/// Codes at WARN or HIGH.
fn serious(f: &[Found]) -> Vec<&str> {
    f.iter()
        .filter(|(_, l)| BAD.contains(&l.as_str()))
        .map(|(c, _)| c.as_str())
        .collect()
}

/// What must not change from run to run: every finding at WARN or HIGH, and the dataset
/// rules' findings at any level. (The generic INFO findings `hot_function` and
/// `straggler_calls` judge single calls' durations and come and go with a millisecond's
/// jitter on these short runs.)
fn stable(f: &[Found]) -> Vec<Found> {
    f.iter()
        .filter(|(c, l)| BAD.contains(&l.as_str()) || DATASET_RULES.contains(&c.as_str()))
        .cloned()
        .collect()
}

/// `code` fires on `name`, with the same findings in three runs; it is absent or INFO on
/// `name --fixed`; the pathology fires no other dataset rule of `others` at WARN/HIGH.
fn fires_then_quiet(name: &str, code: &str, others: &[&str]) {
    let first = found(name, &[]);
    assert!(
        fires(&first, code, BAD),
        "{name}: {code} not fired: {first:?}"
    );
    for o in others.iter().filter(|o| **o != code) {
        assert!(!fires(&first, o, BAD), "{name}: {o} fired too: {first:?}");
    }
    for _ in 0..2 {
        assert_eq!(
            stable(&found(name, &[])),
            stable(&first),
            "{name}: findings differ between runs"
        );
    }
    let fixed = found(name, &["--fixed"]);
    assert!(
        !fires(&fixed, code, BAD),
        "{name} --fixed: {code} still fires: {fixed:?}"
    );
    // The fix leaves a clean program: no rule at all fires at WARN or HIGH.
    assert!(
        serious(&fixed).is_empty(),
        "{name} --fixed: not clean: {fixed:?}"
    );
    for o in others {
        assert!(
            !fires(&fixed, o, BAD),
            "{name} --fixed: {o} fires: {fixed:?}"
        );
    }
}

/// The dataset rules: none may fire on another's fixture (or on a fixed variant).
const DATASET_RULES: &[&str] = &[
    "chunk_too_small",
    "chunk_too_large",
    "chunk_cache_thrash",
    "datatype_conversion",
    "repeated_reads",
    "small_io",
    "contiguous_small_writes",
];

#[test]
fn chunk_too_small_fires_on_tiny_chunks_and_not_on_matched_ones() {
    fires_then_quiet("chunk_small", "chunk_too_small", DATASET_RULES);
}

#[test]
fn chunk_too_large_fires_on_partial_reads_of_big_filtered_chunks() {
    fires_then_quiet("chunk_large", "chunk_too_large", DATASET_RULES);
}

#[test]
fn chunk_cache_thrash_fires_on_column_reads_and_not_with_a_big_enough_cache() {
    fires_then_quiet("chunk_thrash", "chunk_cache_thrash", DATASET_RULES);
}

#[test]
fn datatype_conversion_fires_on_double_into_float() {
    fires_then_quiet("conversion", "datatype_conversion", DATASET_RULES);
}

#[test]
fn repeated_reads_fires_on_a_re_read_hyperslab() {
    fires_then_quiet("repeated_reads", "repeated_reads", DATASET_RULES);
}

#[test]
fn small_io_fires_on_element_writes_and_not_on_one_write() {
    let others: Vec<&str> = DATASET_RULES
        .iter()
        .copied()
        .filter(|c| *c != "contiguous_small_writes")
        .collect();
    fires_then_quiet("small_io", "small_io", &others);
    // The same pathology seen per dataset: many small writes to a contiguous dataset.
    let f = found("small_io", &[]);
    assert!(fires(&f, "contiguous_small_writes", BAD), "{f:?}");
    let f = found("small_io", &["--fixed"]);
    assert!(!fires(&f, "contiguous_small_writes", BAD), "{f:?}");
}

#[test]
fn attribute_writes_are_not_dataset_accesses() {
    // 1500 one-int attribute writes and one 4 MiB dataset write: counted as dataset
    // accesses, the attributes made small_io fire.
    let f = found("attrs", &[]);
    assert!(!fires(&f, "small_io", BAD), "{f:?}");
    assert!(!fires(&f, "contiguous_small_writes", BAD), "{f:?}");
}

#[test]
fn control_is_clean() {
    let f = found("control", &[]);
    assert!(serious(&f).is_empty(), "control: {f:?}");
    assert!(
        f.iter().any(|(c, l)| c == "no_problem" && l == "OK"),
        "control: {f:?}"
    );
}

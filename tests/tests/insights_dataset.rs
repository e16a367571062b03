//! The dataset-level insights on real HDF5 programs (`tests/c/insights/*.c`) traced by
//! h5prov: each rule fires (WARN or HIGH) on its pathology, is absent or INFO on the
//! fixed variant (`--fixed`), and gives the same findings run after run. The clean
//! control gets nothing at WARN or HIGH. `docs/INSIGHTS.md` describes the rules.
//!
//! Where a pathology is as much one of parallel programs (conversion, small writes,
//! re-reads, small chunks, and the control), its MPI build runs too, under `mpirun -np 4`
//! on one MPI-IO file: the same rule must fire, the fix must be clean of every rule, MPI
//! ones included.

use h5prov_tests::{fires, insights_of, Found};

const BAD: &[&str] = &["WARN", "HIGH"];

/// The MPI runs: four ranks (oversubscribed on a two-core machine).
const MPI: Option<usize> = Some(4);

/// The findings of `name` with `args`: the serial build (`ranks` `None`), or the MPI one
/// under `mpirun -np`.
fn found(name: &str, args: &[&str], ranks: Option<usize>) -> Vec<Found> {
    insights_of(name, args, ranks, &[])
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
/// `straggler_calls`, `rank_imbalance_time` of ranks that move no more data than the
/// others, and under MPI `collective_late_arrival` of such ranks, judge single calls'
/// durations or arrival order: a rank descheduled inside its calls on this shared two-core
/// machine comes and goes with the scheduler.)
fn stable(f: &[Found]) -> Vec<Found> {
    f.iter()
        .filter(|(c, l)| BAD.contains(&l.as_str()) || DATASET_RULES.contains(&c.as_str()))
        .cloned()
        .collect()
}

/// No rule finds a rank with more data than the others at WARN or HIGH: the MPI builds
/// give every rank the same work.
fn balanced(what: &str, f: &[Found]) {
    for code in ["straggler_ranks", "rank_imbalance_bytes"] {
        assert!(!fires(f, code, BAD), "{what}: {code}: {f:?}");
    }
}

/// `code` fires on `name` (serial, or MPI with `ranks`), with the same findings in three
/// runs; it is absent or INFO on `name --fixed`, which no rule at all finds at WARN/HIGH;
/// the pathology fires no other dataset rule of `others` at WARN/HIGH. Returns the
/// findings on the pathology and on the fixed variant.
fn fires_then_quiet(
    name: &str,
    ranks: Option<usize>,
    code: &str,
    others: &[&str],
) -> (Vec<Found>, Vec<Found>) {
    let what = match ranks {
        Some(n) => format!("{name} (mpirun -np {n})"),
        None => name.to_string(),
    };
    let first = found(name, &[], ranks);
    assert!(
        fires(&first, code, BAD),
        "{what}: {code} not fired: {first:?}"
    );
    for o in others.iter().filter(|o| **o != code) {
        assert!(!fires(&first, o, BAD), "{what}: {o} fired too: {first:?}");
    }
    balanced(&what, &first);
    for _ in 0..2 {
        assert_eq!(
            stable(&found(name, &[], ranks)),
            stable(&first),
            "{what}: findings differ between runs"
        );
    }
    let fixed = found(name, &["--fixed"], ranks);
    assert!(
        !fires(&fixed, code, BAD),
        "{what} --fixed: {code} still fires: {fixed:?}"
    );
    // The fix leaves a clean program: no rule at all fires at WARN or HIGH.
    assert!(
        serious(&fixed).is_empty(),
        "{what} --fixed: not clean: {fixed:?}"
    );
    (first, fixed)
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
    fires_then_quiet("chunk_small", None, "chunk_too_small", DATASET_RULES);
}

#[test]
fn chunk_too_small_under_mpi() {
    fires_then_quiet("chunk_small", MPI, "chunk_too_small", DATASET_RULES);
}

#[test]
fn chunk_too_large_fires_on_partial_reads_of_big_filtered_chunks() {
    fires_then_quiet("chunk_large", None, "chunk_too_large", DATASET_RULES);
}

#[test]
fn chunk_cache_thrash_fires_on_column_reads_and_not_with_a_big_enough_cache() {
    fires_then_quiet("chunk_thrash", None, "chunk_cache_thrash", DATASET_RULES);
    // The same cache set for the whole file (H5Pset_cache on the FAPL) fixes it too.
    let fapl = found("chunk_thrash", &["--fixed-fapl"], None);
    assert!(serious(&fapl).is_empty(), "--fixed-fapl: {fapl:?}");
}

#[test]
fn datatype_conversion_fires_on_double_into_float() {
    fires_then_quiet("conversion", None, "datatype_conversion", DATASET_RULES);
}

#[test]
fn datatype_conversion_under_mpi() {
    fires_then_quiet("conversion", MPI, "datatype_conversion", DATASET_RULES);
}

#[test]
fn datatype_conversion_fires_on_a_compound_in_another_member_order() {
    // The memory struct {id, v, t} against the file's {t, id, v}: the same size and
    // members, another layout, so HDF5 converts member by member (h36: the connector
    // compares the compounds' member layouts, not only their class and size).
    fires_then_quiet(
        "compound_reorder",
        None,
        "datatype_conversion",
        DATASET_RULES,
    );
}

#[test]
fn repeated_reads_fires_on_a_re_read_hyperslab() {
    fires_then_quiet("repeated_reads", None, "repeated_reads", DATASET_RULES);
}

#[test]
fn repeated_reads_under_mpi() {
    fires_then_quiet("repeated_reads", MPI, "repeated_reads", DATASET_RULES);
}

/// The dataset rules but `contiguous_small_writes`, which the small writes fire too.
fn small_io_others() -> Vec<&'static str> {
    DATASET_RULES
        .iter()
        .copied()
        .filter(|c| *c != "contiguous_small_writes")
        .collect()
}

#[test]
fn small_io_fires_on_element_writes_and_not_on_one_write() {
    let (bad, _) = fires_then_quiet("small_io", None, "small_io", &small_io_others());
    // The same pathology seen per dataset: many small writes to a contiguous dataset.
    assert!(fires(&bad, "contiguous_small_writes", BAD), "{bad:?}");
    assert!(
        !bad.iter().any(|(c, _)| c == "independent_small_io"),
        "no MPI advice without MPI-IO: {bad:?}"
    );
}

#[test]
fn small_io_under_mpi() {
    let (bad, _) = fires_then_quiet("small_io", MPI, "small_io", &small_io_others());
    assert!(fires(&bad, "contiguous_small_writes", BAD), "{bad:?}");
    // Under MPI-IO the same one-record writes are also small *independent* transfers (1000
    // per rank, none collective), which is exactly `independent_small_io`'s pathology, and
    // collective transfers are part of the fix: it must fire. The fixed variant (one
    // collective write and read per rank) is clean of it, as of every rule.
    assert!(fires(&bad, "independent_small_io", BAD), "{bad:?}");
}

#[test]
fn attribute_writes_are_not_dataset_accesses() {
    // 1500 one-int attribute writes and one 4 MiB dataset write: counted as dataset
    // accesses, the attributes made small_io fire.
    let f = found("attrs", &[], None);
    assert!(!fires(&f, "small_io", BAD), "{f:?}");
    assert!(!fires(&f, "contiguous_small_writes", BAD), "{f:?}");
}

/// The control gets nothing at WARN or HIGH, and says so (`no_problem`).
fn clean(ranks: Option<usize>) {
    let f = found("control", &[], ranks);
    assert!(serious(&f).is_empty(), "control ({ranks:?}): {f:?}");
    assert!(
        f.iter().any(|(c, l)| c == "no_problem" && l == "OK"),
        "control ({ranks:?}): {f:?}"
    );
}

#[test]
fn control_is_clean() {
    clean(None);
}

#[test]
fn control_is_clean_under_mpi() {
    clean(MPI);
}

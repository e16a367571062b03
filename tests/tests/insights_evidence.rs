//! Every finding of `h5prov report --json` carries typed evidence (`evidence`, and per
//! object it lists `items`) whose values are the ones its text prints: each quantity,
//! printed through the analyzer's `units`, appears in the finding's title or detail (an
//! item's in the detail). Run on real programs with planted problems: a dataset rule
//! (`small_io`, `contiguous_small_writes`), a cost-model rule (`fill_on_allocation`),
//! metadata rules (`tiny_datasets`, `open_close_churn`) and the MPI rules of a rank with
//! ten times the data (`straggler_ranks`, `collective_late_arrival`, ...).

use h5prov_analyzer::insights::{severity_for_share, Level};
use h5prov_analyzer::units::Quantity;
use h5prov_tests::report_of;
use serde_json::Value;

/// The ways a finding's text may print `q`: its `units` form, and the other forms some
/// texts use (a ratio rounded to 0–2 decimals; a byte count as a raw integer, as in
/// H5Pset_alignment's arguments; a fraction as a whole percentage, `40 %`).
fn printed(q: &Quantity) -> Vec<String> {
    let mut v = vec![q.text()];
    match q {
        Quantity::Ratio(r) => v.extend([format!("{r:.0}"), format!("{r:.2}")]),
        Quantity::Bytes(b) => v.push(b.to_string()),
        Quantity::Fraction(f) => v.push(format!("{:.0} %", f * 100.0)),
        _ => {}
    }
    v
}

/// The quantities of one evidence object, parsed through the analyzer's `Quantity`.
fn quantities(code: &str, e: &Value) -> Vec<(String, Quantity)> {
    e.as_object()
        .unwrap_or_else(|| panic!("{code}: evidence is not an object: {e}"))
        .iter()
        .map(|(k, v)| {
            let q: Quantity = serde_json::from_value(v.clone())
                .unwrap_or_else(|err| panic!("{code}: evidence {k} = {v}: {err}"));
            (k.clone(), q)
        })
        .collect()
}

/// Checks every finding of `report`; returns the codes seen.
fn check(what: &str, report: &Value) -> Vec<String> {
    let mut codes = Vec::new();
    for i in report["insights"]
        .as_array()
        .into_iter()
        .chain(report["timing_notes"].as_array())
        .flatten()
    {
        let code = i["code"].as_str().expect("code");
        let level = i["level"].as_str().expect("level");
        let title = i["title"].as_str().expect("title");
        let detail = i["detail"].as_str().expect("detail");
        let text = format!("{title}\n{detail}");
        let ev = quantities(code, &i["evidence"]);
        assert!(!ev.is_empty(), "{what}: {code} has no evidence: {i}");
        for (name, q) in &ev {
            if printed(q).iter().any(|p| text.contains(p.as_str())) {
                continue;
            }
            // The share of the run's HDF5 time a finding explains is evidence even where
            // its text does not print it: its severity comes from it.
            let Quantity::Fraction(share) = q else {
                panic!("{what}: {code}: evidence {name} = {q:?} is not in its text: {text}");
            };
            assert_eq!(
                name, "share",
                "{what}: {code}: {name} = {q:?} not in: {text}"
            );
            let from_share = severity_for_share(*share).name();
            assert!(
                level == from_share || level == Level::Info.name(),
                "{what}: {code} is {level}, its share {share} makes it {from_share}"
            );
        }
        let items = i["items"]
            .as_array()
            .unwrap_or_else(|| panic!("{what}: {code}: items is not a list: {i}"));
        assert!(items.len() <= 5, "{what}: {code}: {} items", items.len());
        for item in items {
            let q = quantities(code, item);
            assert!(!q.is_empty(), "{what}: {code}: an empty item: {i}");
            for (name, q) in q {
                assert!(
                    printed(&q).iter().any(|p| detail.contains(p.as_str())),
                    "{what}: {code}: item evidence {name} = {q:?} is not in its detail: {detail}"
                );
            }
        }
        codes.push(code.to_string());
    }
    codes
}

/// `check`s the report of fixture `name` and asserts that `codes` are among its findings.
fn evidence_matches_text(name: &str, ranks: Option<usize>, codes: &[&str]) {
    let report = report_of(name, &[], ranks, &[]);
    let seen = check(name, &report);
    for c in codes {
        assert!(seen.iter().any(|s| s == c), "{name}: no {c} in {seen:?}");
    }
}

#[test]
fn small_io_evidence_is_what_its_text_says() {
    evidence_matches_text("small_io", None, &["small_io", "contiguous_small_writes"]);
}

#[test]
fn cost_model_evidence_is_what_its_text_says() {
    evidence_matches_text("fill_overwrite", None, &["fill_on_allocation"]);
}

#[test]
fn metadata_evidence_is_what_its_text_says() {
    evidence_matches_text("tiny_datasets", None, &["tiny_datasets"]);
    evidence_matches_text("churn", None, &["open_close_churn"]);
}

#[test]
fn mpi_evidence_is_what_its_text_says() {
    evidence_matches_text("imbalance", Some(4), &["straggler_ranks"]);
}

/// The analyzer's own fixtures (`analyzer/tests/fixtures`): a serial run, and four MPI
/// ranks with late arrivals, a heavy rank and collective metadata off.
#[test]
fn fixture_evidence_is_what_its_text_says() {
    for (dir, codes) in [
        (
            "serial",
            &[
                "readonly_slow_close",
                "contiguous_small_writes",
                "tail_heavy",
            ][..],
        ),
        (
            "mpi4",
            &[
                "collective_late_arrival",
                "straggler_ranks",
                "collective_metadata_off",
            ][..],
        ),
    ] {
        let path = h5prov_tests::repo()
            .join("analyzer/tests/fixtures")
            .join(dir);
        let out = std::process::Command::new(h5prov_tests::analyzer())
            .args(["report", "--json"])
            .arg(&path)
            .output()
            .expect("run h5prov report");
        assert!(
            out.status.success(),
            "{}",
            h5prov_tests::describe_output("h5prov report", &out)
        );
        let report: Value = serde_json::from_slice(&out.stdout).expect("report JSON");
        let seen = check(dir, &report);
        for c in codes {
            assert!(seen.iter().any(|s| s == c), "{dir}: no {c} in {seen:?}");
        }
    }
}

//! Objects created without a name (`H5Dcreate_anon`, `H5Gcreate_anon`, `H5Tcommit_anon`)
//! get their name when they are linked (`H5Olink`, `H5Lcreate_hard`): before the link
//! their records carry a label of their own, the link's record joins the label to the
//! name, and the analyzer files the earlier records under the name. An object never linked
//! keeps its label: it merges neither with `/` nor with another anonymous object.
//! `tests/c/anonymous.c` makes one of each; the trace is read in every format and through
//! a Parquet export.

use h5prov_format::{ObjectSummary, TraceRecord};
use h5prov_tests::*;
use std::collections::BTreeMap;
use std::path::Path;

const LABEL: &str = "(anonymous #";

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// `tests/c/anonymous.c` traced with `options`; its records and summary rows.
fn traced(
    label: &str,
    options: &str,
) -> (
    Scratch,
    std::path::PathBuf,
    Vec<TraceRecord>,
    Vec<ObjectSummary>,
) {
    let dir = scratch(&format!("anonymous-{label}"));
    let traces = dir.join("t");
    let out = Run::with_h5prov(&c_program("anonymous"), &["a.h5"], &dir, &traces, options).ok();
    assert!(out.contains("done"), "{out}");
    let recs = read_records(&traces);
    let objs = read_objects(&traces);
    (dir, traces, recs, objs)
}

/// The one record of `op` whose path is `path`.
fn one<'r>(recs: &'r [TraceRecord], op: &str, path: &str) -> Vec<&'r TraceRecord> {
    recs.iter()
        .filter(|r| r.op == op && r.path == path)
        .collect()
}

#[test]
fn anonymous_objects_are_named_by_their_link_in_every_format() {
    for format in ["bin", "csv", "jsonl"] {
        let (_dir, traces, recs, objs) = traced(format, &format!("format={format}"));
        let ctx = format!("format={format}, traces in {}", traces.display());

        // The links that name anonymous objects: path is the name, anon the label.
        let links: BTreeMap<&str, (&str, &str)> = recs
            .iter()
            .filter(|r| r.op == "link.create:hard")
            .map(|r| (r.path.as_str(), (r.anon.as_str(), r.kind.as_str())))
            .collect();
        for (name, kind) in [("/grp/d", "dataset"), ("/g2", "group"), ("/t", "datatype")] {
            let (anon, k) = links
                .get(name)
                .unwrap_or_else(|| panic!("no link record naming {name}: {links:?}\n{ctx}"));
            assert!(anon.starts_with(LABEL), "{name}: anon {anon:?}\n{ctx}");
            assert_eq!(*k, kind, "{name}\n{ctx}");
        }
        let label_d = links["/grp/d"].0;
        let (label_g, label_t) = (links["/g2"].0, links["/t"].0);

        // Before the link, the dataset's records carry its label; after, its name.
        let creates: Vec<&TraceRecord> = recs.iter().filter(|r| r.op == "dataset.create").collect();
        assert_eq!(creates.len(), 2, "{creates:#?}\n{ctx}");
        assert_eq!(creates[0].path, label_d, "{ctx}");
        let label_lost = creates[1].path.as_str();
        assert!(label_lost.starts_with(LABEL), "{ctx}");
        let labels = [label_d, label_g, label_t, label_lost];
        for (i, a) in labels.iter().enumerate() {
            assert!(
                labels[i + 1..].iter().all(|b| a != b),
                "four objects, four labels: {labels:?}\n{ctx}"
            );
        }
        assert_eq!(one(&recs, "dataset.write", label_d).len(), 1, "{ctx}");
        assert_eq!(one(&recs, "dataset.write", "/grp/d").len(), 1, "{ctx}");
        assert_eq!(one(&recs, "dataset.read", "/grp/d").len(), 1, "{ctx}");
        assert_eq!(one(&recs, "datatype.commit", label_t).len(), 1, "{ctx}");
        assert_eq!(one(&recs, "group.create", label_g).len(), 1, "{ctx}");
        // The unlinked dataset keeps its label to its close.
        assert_eq!(one(&recs, "dataset.write", label_lost).len(), 1, "{ctx}");
        assert_eq!(one(&recs, "dataset.close", label_lost).len(), 1, "{ctx}");
        let under_root: Vec<_> = recs
            .iter()
            .filter(|r| matches!(r.kind.as_str(), "dataset" | "datatype") && r.path == "/")
            .collect();
        assert!(under_root.is_empty(), "{under_root:#?}\n{ctx}");

        // The summaries: the linked objects under their names, the other under its label.
        let row = |kind: &str, path: &str| {
            let rows: Vec<&ObjectSummary> = objs
                .iter()
                .filter(|o| o.kind == kind && o.path == path)
                .collect();
            assert_eq!(rows.len(), 1, "{kind} {path}: {objs:#?}\n{ctx}");
            rows[0].clone()
        };
        let d = row("dataset", "/grp/d");
        assert_eq!(
            (d.created, d.opens, d.writes, d.reads, d.bytes_written),
            (1, 2, 2, 1, 64),
            "{d:?}\n{ctx}"
        );
        row("group", "/g2");
        row("datatype", "/t");
        let lost = row("dataset", label_lost);
        assert_eq!(
            (lost.writes, lost.bytes_written),
            (1, 32),
            "{lost:?}\n{ctx}"
        );

        // The analyzer: the write made before the link counts for /grp/d.
        let report: serde_json::Value = serde_json::from_slice(&h5prov_ok(&[
            "report",
            "--json",
            "--no-progress",
            s(&traces),
        ]))
        .unwrap();
        let datasets = datasets_of(&report);
        assert_eq!(
            datasets.keys().map(String::as_str).collect::<Vec<_>>(),
            {
                let mut want = vec!["/grp/d", label_lost];
                want.sort();
                want
            },
            "{report:#}\n{ctx}"
        );
        assert_eq!(datasets["/grp/d"], (2, 64, 32, 2), "{ctx}");
        assert_eq!(datasets[label_lost], (1, 32, 0, 1), "{ctx}");

        if format == "bin" {
            // The same report from a Parquet export of the trace.
            let out = traces.parent().unwrap().join("pq");
            h5prov_ok(&["export", "--no-progress", "--parquet", s(&out), s(&traces)]);
            let from_parquet: serde_json::Value =
                serde_json::from_slice(&h5prov_ok(&["report", "--json", "--no-progress", s(&out)]))
                    .unwrap();
            assert_eq!(
                datasets_of(&from_parquet),
                datasets,
                "Parquet export\n{ctx}"
            );
        }
    }
}

/// The report's datasets: path → (writes, bytes written, bytes read, opens).
fn datasets_of(report: &serde_json::Value) -> BTreeMap<String, (u64, u64, u64, u64)> {
    report["datasets"]
        .as_array()
        .unwrap_or_else(|| panic!("no datasets in {report:#}"))
        .iter()
        .map(|r| {
            let n = |k: &str| r[k].as_u64().unwrap_or(0);
            (
                r["path"].as_str().unwrap().to_string(),
                (n("writes"), n("bytes_written"), n("bytes_read"), n("opens")),
            )
        })
        .collect()
}

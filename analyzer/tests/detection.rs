//! Exact detection on the hand-made fixtures (planted facts: tests/fixtures/README.md), and
//! identical results with 1 and 4 threads.

mod common;

use h5prov_analyzer::analysis::Report;
use h5prov_analyzer::insights::{Level, Thresholds};
use h5prov_analyzer::read::ReadOptions;
use h5prov_analyzer::report::analyze;
use h5prov_analyzer::{load, render};
use std::path::Path;

fn report(dir: &str, threads: usize) -> Report {
    report_with(dir, threads, &Thresholds::default())
}

fn report_with(dir: &str, threads: usize, th: &Thresholds) -> Report {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
    let path = common::pkg_dir().join("tests/fixtures").join(dir);
    let agg = pool
        .install(|| load(&path, &ReadOptions::default(), &|_| {}))
        .unwrap();
    analyze(agg, th, &[format!("tests/fixtures/{dir}")])
}

#[test]
fn mpi4_hot_functions() {
    let r = report("mpi4", 2);
    assert_eq!(
        r.run.records, 1375,
        "rank 3's truncated last line is not counted"
    );
    assert_eq!(r.run.truncated.len(), 1);
    assert!(r.run.truncated[0].ends_with("h5prov-r3-p1003.trace.csv:345"));
    assert_eq!(r.run.processes, 4);
    let by_time: Vec<&str> = r.ops.iter().take(3).map(|o| o.op.as_str()).collect();
    assert_eq!(by_time, ["dataset.write", "dataset.create", "dataset.read"]);
    let mut by_count: Vec<_> = r.ops.iter().collect();
    by_count.sort_by_key(|o| o.rank_by_count);
    let top2: Vec<&str> = by_count.iter().take(2).map(|o| o.op.as_str()).collect();
    assert_eq!(top2, ["dataset.close", "dataset.get:space"]);
    let w = &r.ops[0];
    assert_eq!(
        (w.count, w.total_ns, w.bytes),
        (160, 130_000_000, 130 << 20)
    );
    assert_eq!(w.self_ns, 160 * 300);
    let fam = r
        .families
        .iter()
        .find(|f| f.family == "dataset.get")
        .unwrap();
    assert_eq!(fam.count, 320);
}

#[test]
fn mpi4_straggler_ranks() {
    let r = report("mpi4", 2);
    let names = |op: &str| -> Vec<i64> {
        r.straggler_ranks
            .iter()
            .find(|s| s.op == op)
            .map(|s| s.outliers.iter().map(|o| o.rank).collect())
            .unwrap_or_default()
    };
    assert_eq!(names("dataset.write"), [3], "rank 3 writes 10x");
    assert_eq!(names("group.open"), [2], "rank 2's group.open is 8x");
    // Rank 1 has the 40 ms create; rank 3, busy with 10x the writes before each create,
    // arrives last at the collective creates while the others wait.
    assert_eq!(
        names("dataset.create"),
        [3, 1],
        "late arrival, then the 40 ms create"
    );
    let rules: Vec<&str> = r
        .straggler_ranks
        .iter()
        .find(|s| s.op == "dataset.create")
        .map(|s| s.outliers.iter().map(|o| o.rule.as_str()).collect())
        .unwrap();
    assert_eq!(rules, ["late-arrival", "drishti"]);
    let late = r
        .collective_skew
        .iter()
        .find(|c| c.op == "dataset.create")
        .unwrap();
    assert_eq!(late.straggler.as_ref().map(|l| l.rank), Some(3));
    assert_eq!((late.calls, late.ranks), (40, 4));
    assert_eq!(names("dataset.read"), Vec::<i64>::new());
    assert_eq!(names("dataset.close"), Vec::<i64>::new());
    let w = r
        .straggler_ranks
        .iter()
        .find(|s| s.op == "dataset.write")
        .unwrap();
    assert!((w.outliers[0].x_median - 10.0).abs() < 1e-9);
}

#[test]
fn mpi4_straggler_calls() {
    let r = report("mpi4", 2);
    let c = r
        .straggler_calls
        .iter()
        .find(|s| s.op == "dataset.create")
        .unwrap();
    let got: Vec<(i64, u64, u64, &str)> = c
        .calls
        .iter()
        .map(|c| (c.rank, c.seq, c.total_ns, c.path.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            (1, 101, 40_000_000, "/Step#2/id1"),
            (0, 170, 30_000_000, "/Step#4/x")
        ],
        "exactly the two planted calls"
    );
    assert_eq!(c.stragglers, 2);
    // Every rank-3 write is a straggler call (10x the median); no other rank's is.
    let w = r
        .straggler_calls
        .iter()
        .find(|s| s.op == "dataset.write")
        .unwrap();
    assert_eq!(w.stragglers, 40);
    assert!(w.calls.iter().all(|c| c.rank == 3));
    let g = r
        .straggler_calls
        .iter()
        .find(|s| s.op == "group.open")
        .unwrap();
    assert_eq!(g.stragglers, 5);
    assert!(g.calls.iter().all(|c| c.rank == 2));
    let ops: Vec<&str> = r.straggler_calls.iter().map(|s| s.op.as_str()).collect();
    assert_eq!(ops.len(), 3, "no other op has straggler calls: {ops:?}");
}

#[test]
fn mpi4_insights_and_objects() {
    let r = report("mpi4", 2);
    let find = |code: &str| r.insights.iter().find(|i| i.code == code);
    let cm = find("collective_metadata_off").expect("collective metadata insight");
    assert_eq!(cm.level, Level::High, "{cm:?}");
    assert!(cm.title.contains("4 MPI ranks"), "{cm:?}");
    // 320 accesses of 256 KiB: below Drishti's absolute minimum of small requests (1000),
    // so access sizes are not judged.
    assert!(find("small_io").is_none());
    // Rank 3 moves ten times the data: named once, per operation, with its data.
    let s = find("straggler_ranks").unwrap();
    assert!(
        s.detail.contains("rank 3 moves ×10.0 the median data"),
        "{s:?}"
    );
    assert!(find("rank_imbalance_bytes").is_none(), "said once");
    let late = find("collective_late_arrival").unwrap();
    assert!(late
        .detail
        .contains("rank 3 (it moves materially more data)"));
    assert!(find("broken_collective").is_some());
    assert!(find("incomplete_trace").is_some());
    assert_eq!(r.transfers.broken_collective, 8);
    assert_eq!(r.transfers.collective, 152);
    assert_eq!(r.datasets.len(), 40);
    assert_eq!(
        r.datasets[0].path, "/Step#2/id1",
        "top dataset by time has the 40 ms create"
    );
    assert_eq!(r.datasets[0].layout, "contiguous");
    let f = &r.files[0];
    assert_eq!((f.file.as_str(), f.procs, f.opens), ("vpic.h5", 4, 8));
    // 256 KiB accesses fall in bucket 19 ([256 KiB, 512 KiB)).
    assert_eq!(r.access_sizes.reads[19], 160);
    let classes: Vec<&str> = r.phases.iter().map(|p| p.class.as_str()).collect();
    assert_eq!(classes.first(), Some(&"metadata"));
    assert!(classes.contains(&"data write") && classes.contains(&"data read"));
    let read = r.phases.iter().find(|p| p.class == "data read").unwrap();
    assert_eq!(read.dominant_op, "dataset.read");
    assert_eq!(read.ranks, 4);
}

#[test]
fn serial_insights() {
    // The fixture's churn (61 opens) and tiny datasets (120) are below the default
    // thresholds (100 opens, 1000 datasets): judged here with the old ones.
    let th = Thresholds {
        churn_opens: 10,
        tiny_dataset_count: 100,
        ..Thresholds::default()
    };
    let r = report_with("serial", 1, &th);
    let codes: Vec<&str> = r.insights.iter().map(|i| i.code.as_str()).collect();
    for c in [
        "metadata_time",
        "open_close_churn",
        "readonly_slow_close",
        "tiny_datasets",
        "contiguous_small_writes",
    ] {
        assert!(codes.contains(&c), "missing {c} in {codes:?}");
    }
    assert!(
        !codes.contains(&"collective_metadata_off"),
        "not an MPI run"
    );
    assert!(
        r.straggler_ranks.is_empty(),
        "one process: no straggler ranks"
    );
    let c = r
        .straggler_calls
        .iter()
        .map(|s| s.op.as_str())
        .collect::<Vec<_>>();
    assert_eq!(
        c,
        ["dataset.close"],
        "the slow read-only closes, nothing else"
    );
    let churn = r
        .insights
        .iter()
        .find(|i| i.code == "open_close_churn")
        .unwrap();
    assert!(churn.detail.contains("tiny.h5:/t000 opened 61 times"));
    let defaults = report("serial", 1);
    for c in ["open_close_churn", "tiny_datasets"] {
        assert!(
            !defaults.insights.iter().any(|i| i.code == c),
            "{c} below the default thresholds"
        );
    }
}

#[test]
fn one_and_four_threads_give_identical_output() {
    for dir in ["mpi4", "serial"] {
        let a = render::json(&report(dir, 1));
        let b = render::json(&report(dir, 4));
        assert_eq!(a, b, "{dir}: JSON differs between 1 and 4 threads");
    }
}

#[test]
fn merge_order_does_not_matter() {
    use h5prov_analyzer::aggregate::{
        aggregate_meta, aggregate_objects, aggregate_trace, Aggregate,
    };
    use h5prov_analyzer::read::discover;
    let inputs = discover(&common::pkg_dir().join("tests/fixtures/mpi4")).unwrap();
    let opts = ReadOptions::default();
    let mut parts: Vec<Aggregate> = Vec::new();
    for (f, e) in &inputs.traces {
        parts.push(aggregate_trace(&f.path, *e, &opts).unwrap());
    }
    for (f, e) in &inputs.objects {
        parts.push(aggregate_objects(&f.path, *e, &opts).unwrap());
    }
    for f in &inputs.metas {
        parts.push(aggregate_meta(&f.path));
    }
    let fold = |order: Vec<usize>| {
        let mut acc = Aggregate::default();
        for i in order {
            acc.merge(parts[i].clone());
        }
        acc
    };
    let n = parts.len();
    let fwd = fold((0..n).collect());
    let rev = fold((0..n).rev().collect());
    let odd = fold(
        (0..n)
            .filter(|i| i % 2 == 1)
            .chain((0..n).filter(|i| i % 2 == 0))
            .collect(),
    );
    assert_eq!(fwd, rev);
    assert_eq!(fwd, odd);
    let _ = Path::new("");
}

#[test]
fn accumulators_give_the_same_aggregate_however_files_are_grouped() {
    use h5prov_analyzer::aggregate::Accumulator;
    use h5prov_analyzer::read::discover;
    let inputs = discover(&common::pkg_dir().join("tests/fixtures/mpi4")).unwrap();
    let opts = ReadOptions::default();
    // Each file is one job: 0 = trace, 1 = objects, 2 = meta.
    let mut jobs: Vec<(u8, &Path, h5prov_format::Encoding)> = Vec::new();
    for (f, e) in &inputs.traces {
        jobs.push((0, &f.path, *e));
    }
    for (f, e) in &inputs.objects {
        jobs.push((1, &f.path, *e));
    }
    for f in &inputs.metas {
        jobs.push((2, &f.path, h5prov_format::Encoding::Csv));
    }
    assert!(
        jobs.iter().filter(|j| j.0 == 1).count() >= 2,
        "fixture has objects files"
    );
    let read = |acc: &mut Accumulator, j: &(u8, &Path, h5prov_format::Encoding)| match j.0 {
        0 => acc.add_trace(j.1, j.2, &opts).unwrap(),
        1 => acc.add_objects(j.1, j.2, &opts).unwrap(),
        _ => acc.add_meta(j.1),
    };
    // One accumulator reads everything.
    let mut one = Accumulator::default();
    for j in &jobs {
        read(&mut one, j);
    }
    let one = one.finish();
    assert!(!one.objects.is_empty() && !one.summaries.is_empty());
    // One accumulator per file, in reverse order.
    let per_file: Vec<Accumulator> = jobs
        .iter()
        .rev()
        .map(|j| {
            let mut a = Accumulator::default();
            read(&mut a, j);
            a
        })
        .collect();
    assert_eq!(one, Accumulator::finish_all(per_file), "one per file");
    // Two accumulators, odd and even files, merged with `merge`.
    let mut odd = Accumulator::default();
    let mut even = Accumulator::default();
    for (i, j) in jobs.iter().enumerate() {
        read(if i % 2 == 1 { &mut odd } else { &mut even }, j);
    }
    even.merge(odd);
    assert_eq!(one, even.finish(), "odd and even files, merged");
}

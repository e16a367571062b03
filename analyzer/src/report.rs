//! The report: [`analyze`] runs detection ([`crate::analysis`]) over an aggregate, then
//! the insight rules ([`crate::insights`]) over the detection's [`Report`], so that data
//! flows one way (the rules read the report, and detection knows no rule).

use crate::aggregate::timeline::segment;
use crate::aggregate::Aggregate;
use crate::analysis::{
    add_late_arrivals, collectives_by_run, dataflow, dataset_rows, family_rows, file_rows, op_rows,
    process_groups, program_rows, rank_rows, run_info, straggler_calls, straggler_ranks,
    tail_heavy, transfers, AccessSizes, Report,
};
use crate::insights::{self, Thresholds};
use std::collections::BTreeSet;

/// Builds the report. The aggregate is taken apart as the report takes what it needs from
/// it: on object-heavy traces its object tables and the report's dataset rows were the
/// analyzer's peak of memory together (see `dataset_rows`).
pub fn analyze(mut agg: Aggregate, th: &Thresholds, inputs: &[String]) -> Report {
    let groups = process_groups(&agg);
    let mut run = run_info(&agg, inputs);
    run.programs = program_rows(&agg, &groups);
    run.runs = groups.values().collect::<BTreeSet<_>>().len();
    let total = agg.total_ns();
    let ops = op_rows(&agg, total);
    let families = family_rows(&agg, total);
    let (ranks, rank_ops) = rank_rows(&agg, &groups);
    let straggler_calls = straggler_calls(&agg, th, run.first_ns);
    let collectives = collectives_by_run(std::mem::take(&mut agg.collectives), &groups);
    let collective_skew =
        crate::analysis::collective::analyze(&collectives, th.late_wait_share, th.late_min_wait_ns);
    drop(collectives);
    let mut straggler_ranks = straggler_ranks(&agg, &groups, th, total);
    add_late_arrivals(&mut straggler_ranks, &collective_skew, &agg, &groups, total);
    let tail_heavy = tail_heavy(&ops, th);
    let files = file_rows(&agg);
    let transfers = transfers(&agg);
    // The last readers of the object tables before the dataset rows take them.
    let churn: Vec<insights::Insight> = crate::insights::mpi::open_close_churn(&agg, th)
        .into_iter()
        .chain(crate::insights::mpi::path_traversal(&agg))
        .chain(crate::insights::mpi::attribute_storage_compact(&agg))
        .chain(crate::insights::costmodel::repeated_attribute_reads(&agg))
        .chain(crate::insights::costmodel::recreated_attributes(&agg))
        .collect();
    let datasets = dataset_rows(
        std::mem::take(&mut agg.objects),
        std::mem::take(&mut agg.summaries),
    );
    let access_sizes = AccessSizes {
        reads: agg.io_sizes[0].counts(),
        writes: agg.io_sizes[1].counts(),
    };
    let (windows, phases) = segment(&agg.timeline, agg.first_ns, agg.last_ns);
    let dataflow = dataflow(&agg);
    let mut report = Report {
        run,
        warnings: crate::aggregate::check::warnings(&agg.diag),
        thresholds: th.clone(),
        ops,
        families,
        ranks,
        rank_ops,
        straggler_calls,
        straggler_ranks,
        collective_skew,
        tail_heavy,
        files,
        datasets,
        transfers,
        access_sizes,
        windows,
        phases,
        async_ops: crate::aggregate::asyncops::rows(&agg.async_ops),
        insights: Vec::new(),
        timing_notes: Vec::new(),
        dataflow,
    };
    (report.insights, report.timing_notes) =
        insights::split_timing_notes(insights::detect(&report, &agg, th, churn));
    report
}

//! Instructions per HDF5 call of metadata-heavy, measured with
//! `valgrind --tool=callgrind`.
//!
//! Instruction counts are repeatable where wall time varies by ±40 % on these
//! machines. Each mode runs metadata-heavy twice, with `n1` and `n2` loop
//! iterations; the difference of the two instruction totals divided by the
//! difference of the call counts is the cost per call of the loop alone,
//! free of process start, HDF5 initialisation and plugin loading.

use std::fs;
use std::path::Path;
use std::process::Command;

use serde::Serialize;

use crate::config::{Mode, Settings, Workload};
use crate::proc::{run_group, Launch};
use crate::runner::check_trace;
use crate::BenchError;

/// Callgrind's result for one mode.
#[derive(Clone, Debug, Serialize)]
pub struct CallgrindRow {
    /// Mode name.
    pub mode: String,
    /// Loop iterations of the two runs.
    pub iters: (u64, u64),
    /// Instructions (Ir) of the two runs.
    pub instructions: (u64, u64),
    /// API calls of the two runs.
    pub calls: (u64, u64),
    /// VOL-reaching calls of the two runs.
    pub vol_calls: (u64, u64),
    /// Δinstructions / Δcalls.
    pub ir_per_call: f64,
    /// Δinstructions / Δvol_calls.
    pub ir_per_vol_call: f64,
    /// `ir_per_call` minus native's.
    pub added_vs_native: Option<f64>,
    /// `ir_per_call` minus pass_through's.
    pub added_vs_pass_through: Option<f64>,
    /// `ir_per_call` minus the `baseline-` twin's, when it ran.
    pub added_vs_baseline: Option<f64>,
}

/// Reads the `totals:` (or `summary:`) line of a callgrind output file.
pub fn parse_total(text: &str) -> Option<u64> {
    text.lines()
        .find_map(|l| {
            l.strip_prefix("totals:")
                .or_else(|| l.strip_prefix("summary:"))
        })
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
}

fn one_run(
    settings: &Settings,
    mode: Mode,
    iters: u64,
    dir: &Path,
) -> Result<(u64, u64, u64), BenchError> {
    let out = dir.join("out");
    let traces = dir.join("traces");
    for d in [&out, &traces] {
        if d.exists() {
            fs::remove_dir_all(d)?;
        }
        fs::create_dir_all(d)?;
    }
    let cg_file = dir.join("callgrind.out");
    let launch = Launch {
        program: settings.bin_dir.join(Workload::MetadataHeavy.program()),
        args: vec![
            "-d".into(),
            out.display().to_string(),
            "-n".into(),
            iters.to_string(),
        ],
        env: mode.env(
            settings.plugin_for(mode),
            &traces,
            settings.collector.as_deref(),
        ),
        procs: 1,
        wrapper: vec![
            "valgrind".into(),
            "--tool=callgrind".into(),
            "-q".into(),
            format!("--callgrind-out-file={}", cg_file.display()),
        ],
        mpi: false,
    };
    let g = run_group(&launch, &dir.join("logs"))?;
    if mode.is_h5prov() {
        check_trace(mode, &traces)?;
    }
    let text = fs::read_to_string(&cg_file)
        .map_err(|e| BenchError::new(format!("cannot read {}: {e}", cg_file.display())))?;
    let ir = parse_total(&text)
        .ok_or_else(|| BenchError::new(format!("no totals: line in {}", cg_file.display())))?;
    Ok((ir, g.sum("calls"), g.sum("vol_calls")))
}

/// Runs the measurement for every mode in `settings.modes`.
pub fn run(
    settings: &Settings,
    progress: &mut dyn FnMut(&str),
) -> Result<Vec<CallgrindRow>, BenchError> {
    let ok = Command::new("valgrind")
        .arg("--version")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !ok {
        return Err(BenchError::new(
            "valgrind is not installed (apt-get install valgrind), needed by --callgrind",
        ));
    }
    let (n1, n2) = settings.callgrind_iters;
    if n2 <= n1 {
        return Err(BenchError::new(
            "callgrind iterations: the second count must exceed the first",
        ));
    }
    let mut rows = Vec::new();
    for &mode in &settings.modes {
        let dir = settings.work_dir.join(format!("callgrind/{}", mode.name()));
        let a = one_run(settings, mode, n1, &dir)?;
        let b = one_run(settings, mode, n2, &dir)?;
        fs::remove_dir_all(&dir)?;
        let d_ir = b.0.saturating_sub(a.0) as f64;
        let d_calls = b.1.saturating_sub(a.1).max(1) as f64;
        let d_vol = b.2.saturating_sub(a.2).max(1) as f64;
        let row = CallgrindRow {
            mode: mode.name(),
            iters: (n1, n2),
            instructions: (a.0, b.0),
            calls: (a.1, b.1),
            vol_calls: (a.2, b.2),
            ir_per_call: d_ir / d_calls,
            ir_per_vol_call: d_ir / d_vol,
            added_vs_native: None,
            added_vs_pass_through: None,
            added_vs_baseline: None,
        };
        progress(&format!(
            "[callgrind] {:<20} {:>8.0} instructions per call",
            row.mode, row.ir_per_call
        ));
        rows.push(row);
    }
    let base = |name: &str| rows.iter().find(|r| r.mode == name).map(|r| r.ir_per_call);
    let (native, pt) = (base("native"), base("pass_through"));
    let twins: Vec<Option<f64>> = settings
        .modes
        .iter()
        .map(|m| {
            (!m.is_baseline())
                .then(|| m.as_baseline())
                .flatten()
                .and_then(|t| base(&t.name()))
        })
        .collect();
    for (r, twin) in rows.iter_mut().zip(twins) {
        r.added_vs_native = native.map(|b| r.ir_per_call - b);
        r.added_vs_pass_through = pt.map(|b| r.ir_per_call - b);
        r.added_vs_baseline = twin.map(|b| r.ir_per_call - b);
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_totals() {
        let text = "version: 1\nevents: Ir\nfl=a\n1 2\ntotals: 123456\n";
        assert_eq!(parse_total(text), Some(123456));
        assert_eq!(parse_total("summary: 7 8\n"), Some(7));
        assert_eq!(parse_total("events: Ir\n"), None);
    }
}

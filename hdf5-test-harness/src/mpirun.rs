//! `mpi-run`: the MPI workloads under `mpirun` through h5prov, then the analyzer on their
//! traces. The VPIC-like kernel runs with one rank slowed (it writes FACTOR times the
//! particles); `h5prov report --json` must name that rank as the straggler of
//! `dataset.write`.

use crate::error::{Context, Error, Result};
use crate::process::{command_line, describe_status, find_program, fresh_dir, run_step, tail};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Settings of one `mpi-run`.
#[derive(Debug, Clone)]
pub struct MpiRunOptions {
    /// The repository (for `workloads/build.sh`).
    pub repo: PathBuf,
    /// The parallel HDF5 installation the workloads are built against.
    pub hdf5_dir: PathBuf,
    /// Directory holding the parallel build of `libh5prov.so`.
    pub plugin_path: PathBuf,
    /// The analyzer binary (`h5prov`).
    pub analyzer: PathBuf,
    /// Work directory: workloads, data, traces, reports.
    pub out: PathBuf,
    /// Ranks.
    pub np: usize,
    /// The slowed rank.
    pub slow_rank: usize,
    /// How many times the particles of the others the slowed rank writes.
    pub factor: u64,
    /// Particles per (normal) rank.
    pub particles: u64,
    /// Timesteps.
    pub timesteps: u64,
    /// Transfer modes to run (`ind`, `coll`).
    pub xfers: Vec<String>,
    /// Transfer modes in which the slowed rank must be named.
    pub require: Vec<String>,
    /// Fail when the report's independent/collective counts do not match the kernel's `-x`.
    pub check_transfers: bool,
    /// VPIC runs per transfer mode; the slowed rank must be named in a majority (wall-time
    /// noise on a shared 2-core machine, page-cache writeback stalls, can hide it in one run).
    pub attempts: usize,
}

/// The report's `(independent, collective)` counts by *requested* transfer mode: the sums of
/// `transfers.by_mode[].count` whose `requested` is `independent` / `collective`.
pub fn requested_counts(report: &Value) -> Option<(u64, u64)> {
    let modes = report.get("transfers")?.get("by_mode")?.as_array()?;
    let sum = |want: &str| -> u64 {
        modes
            .iter()
            .filter(|m| m.get("requested").and_then(Value::as_str) == Some(want))
            .filter_map(|m| m.get("count").and_then(Value::as_u64))
            .sum()
    };
    Some((sum("independent"), sum("collective")))
}

/// The `(independent, collective)` counts a VPIC-like run must report: `writes` dataset
/// writes in all, all of them of the kernel's transfer mode.
pub fn expected_transfers(xfer: &str, writes: u64) -> (u64, u64) {
    if xfer == "coll" {
        (0, writes)
    } else {
        (writes, 0)
    }
}

/// The rank in a trace file name `...-r<rank>-...` (h5prov's default `h5prov-r%r-p%p`).
pub fn rank_of_trace_name(name: &str) -> Option<i64> {
    let stem = name
        .strip_suffix(".trace.csv")
        .or_else(|| name.strip_suffix(".trace.jsonl"))
        .or_else(|| name.strip_suffix(".trace.bin.zst"))
        .or_else(|| name.strip_suffix(".trace.bin"))?;
    stem.split('-').find_map(|part| {
        let digits = part.strip_prefix('r')?;
        (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
            .then(|| digits.parse().ok())
            .flatten()
    })
}

/// Ranks of the trace files in `dir` (and its subdirectories, for `dirs=N`), sorted.
pub fn trace_ranks(dir: &Path) -> Result<Vec<i64>> {
    let mut ranks = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d)
            .context(|| format!("reading trace directory {}", d.display()))?
            .flatten()
        {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if let Some(r) = rank_of_trace_name(&e.file_name().to_string_lossy()) {
                ranks.push(r);
            }
        }
    }
    ranks.sort_unstable();
    Ok(ranks)
}

/// The straggler ranks that `h5prov report --json` names for `op` (the `rank` of each entry
/// of `outliers` in the `straggler_ranks` element whose `op` is `op`), slowest first; `None`
/// when the report has no `straggler_ranks` array at all.
pub fn straggler_ranks(report: &Value, op: &str) -> Option<Vec<i64>> {
    let all = report.get("straggler_ranks")?.as_array()?;
    Some(
        all.iter()
            .filter(|s| s.get("op").and_then(Value::as_str) == Some(op))
            .flat_map(|s| {
                s.get("outliers")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
            })
            .filter_map(|o| o.get("rank").and_then(Value::as_i64))
            .collect(),
    )
}

/// One line per process of `op` from the report's `rank_ops` (rank and total ns), sorted by
/// rank, for the log.
pub fn rank_totals(report: &Value, op: &str) -> Vec<(i64, u64)> {
    let mut v: Vec<(i64, u64)> = report
        .get("rank_ops")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|r| r.get("op").and_then(Value::as_str) == Some(op))
        .filter_map(|r| {
            Some((
                r.get("rank")?.as_i64()?,
                r.get("total_ns").and_then(Value::as_u64).unwrap_or(0),
            ))
        })
        .collect();
    v.sort_unstable();
    v
}

fn mpirun_cmd(np: usize, hdf5_dir: &Path) -> Result<Command> {
    let launcher = find_program("mpirun")
        .or_else(|| find_program("mpiexec"))
        .ok_or_else(|| Error::new("neither mpirun nor mpiexec is on PATH (install openmpi-bin)"))?;
    let mut cmd = Command::new(launcher);
    cmd.arg("-np").arg(np.to_string());
    // The parallel libhdf5 first, whatever the caller's LD_LIBRARY_PATH says.
    cmd.env(
        "LD_LIBRARY_PATH",
        crate::runner::library_path_with(
            &hdf5_dir.join("lib"),
            std::env::var_os("LD_LIBRARY_PATH").as_deref(),
        ),
    );
    for (k, v) in crate::testpar::mpi_env(|k| std::env::var_os(k).is_some()) {
        cmd.env(k, v);
    }
    Ok(cmd)
}

/// Runs `program args` under `mpirun -np np` through h5prov with traces in `traces`; checks
/// that every rank wrote a trace file. Returns the workload's stdout.
fn traced_run(
    o: &MpiRunOptions,
    step: &str,
    program: &Path,
    args: &[String],
    traces: &Path,
    log: &Path,
) -> Result<String> {
    fresh_dir(traces)?;
    let mut cmd = mpirun_cmd(o.np, &o.hdf5_dir)?;
    cmd.arg(program).args(args);
    cmd.env("HDF5_PLUGIN_PATH", &o.plugin_path).env(
        "HDF5_VOL_CONNECTOR",
        format!(
            "h5prov under_vol=0;under_info={{}};path={};level=dataset",
            traces.display()
        ),
    );
    println!("[mpi-run] {step}: {}", command_line(&cmd));
    let secs = run_step(step, &mut cmd, log)?;
    let ranks = trace_ranks(traces)?;
    let want: Vec<i64> = (0..o.np as i64).collect();
    if ranks != want {
        return Err(Error::new(format!(
            "step '{step}': expected one trace file per rank 0..{} in {}, found ranks {ranks:?} \
             (was h5prov loaded? HDF5_PLUGIN_PATH={}); log {}",
            o.np - 1,
            traces.display(),
            o.plugin_path.display(),
            log.display()
        )));
    }
    println!(
        "[mpi-run] {step}: {secs:.1} s, {} trace files (ranks 0..{})",
        ranks.len(),
        o.np - 1
    );
    Ok(std::fs::read_to_string(log).unwrap_or_default())
}

/// Runs `h5prov report --json traces` into `json`.
fn report(o: &MpiRunOptions, traces: &Path, json: &Path) -> Result<Value> {
    let mut cmd = Command::new(&o.analyzer);
    cmd.arg("report").arg("--json").arg(traces);
    let out = cmd
        .output()
        .context(|| format!("running `{}`", command_line(&cmd)))?;
    if !out.status.success() {
        return Err(Error::new(format!(
            "`{}` ended with {}: {}",
            command_line(&cmd),
            describe_status(out.status, false),
            String::from_utf8_lossy(&out.stderr)
        )));
    }
    std::fs::write(json, &out.stdout).context(|| format!("writing {}", json.display()))?;
    serde_json::from_slice(&out.stdout)
        .context(|| format!("parsing the JSON report of `{}`", command_line(&cmd)))
}

/// Runs everything; `Ok(true)` when the slowed rank was named wherever required.
pub fn run(o: &MpiRunOptions) -> Result<bool> {
    if o.slow_rank >= o.np {
        return Err(Error::new(format!(
            "--slow-rank {} is not below --np {}",
            o.slow_rank, o.np
        )));
    }
    let plugin = o.plugin_path.join("libh5prov.so");
    if !plugin.is_file() {
        return Err(Error::new(format!(
            "{} not found: build h5prov against the parallel HDF5 \
             (HDF5_DIR={} CARGO_TARGET_DIR=target/parallel cargo build --release -p h5prov) \
             and copy target/parallel/release/libh5prov.so there",
            plugin.display(),
            o.hdf5_dir.display()
        )));
    }
    if !o.analyzer.is_file() {
        return Err(Error::new(format!(
            "analyzer {} not found: cargo build --release -p h5prov-analyzer",
            o.analyzer.display()
        )));
    }
    std::fs::create_dir_all(&o.out).context(|| format!("creating {}", o.out.display()))?;
    let bin = o.out.join("bin");
    let mut cmd = Command::new("sh");
    cmd.arg(o.repo.join("workloads/build.sh"))
        .arg("--mpi")
        .arg(&bin)
        .env("HDF5_DIR", &o.hdf5_dir);
    run_step(
        "build the MPI workloads (workloads/build.sh --mpi)",
        &mut cmd,
        &o.out.join("build.log"),
    )?;
    let mut ok = true;
    for xfer in &o.xfers {
        let data = o.out.join(format!("data-{xfer}"));
        fresh_dir(&data)?;
        let mut hits = 0;
        for attempt in 1..=o.attempts {
            let traces = o.out.join(format!("traces-vpic-{xfer}-{attempt}"));
            let args: Vec<String> = [
                "-d",
                &data.display().to_string(),
                "-p",
                &o.particles.to_string(),
                "-t",
                &o.timesteps.to_string(),
                "-x",
                xfer,
                "-s",
                &format!("{}:{}", o.slow_rank, o.factor),
            ]
            .map(String::from)
            .to_vec();
            traced_run(
                o,
                &format!(
                    "vpic_write-mpi -x {xfer} (attempt {attempt}/{})",
                    o.attempts
                ),
                &bin.join("vpic_write-mpi"),
                &args,
                &traces,
                &o.out.join(format!("vpic-{xfer}-{attempt}.log")),
            )?;
            let rep = report(
                o,
                &traces,
                &o.out.join(format!("report-vpic-{xfer}-{attempt}.json")),
            )?;
            let named = straggler_ranks(&rep, "dataset.write").ok_or_else(|| {
                Error::new("the analyzer's JSON report has no straggler_ranks array")
            })?;
            let totals: Vec<String> = rank_totals(&rep, "dataset.write")
                .iter()
                .map(|(r, ns)| format!("r{r}={:.1}ms", *ns as f64 / 1e6))
                .collect();
            let transfers = rep
                .get("transfers")
                .map(Value::to_string)
                .unwrap_or_default();
            let hit = named.contains(&(o.slow_rank as i64));
            let required = o.require.contains(xfer);
            println!(
            "[mpi-run] vpic -x {xfer}: dataset.write per rank: {}; straggler ranks named: {named:?}; \
             rank {} (writes {}x) {}{}",
            totals.join(" "),
            o.slow_rank,
            o.factor,
            if hit { "IS named the straggler" } else { "is NOT named the straggler" },
            if required { "" } else { " (informational for this transfer mode)" }
        );
            println!("[mpi-run] vpic -x {xfer}: transfers: {transfers}");
            hits += usize::from(hit);
            let want = expected_transfers(xfer, 8 * o.timesteps * o.np as u64);
            let got = requested_counts(&rep);
            let match_ = got == Some(want);
            println!(
            "[mpi-run] vpic -x {xfer}: requested independent/collective writes: report {got:?}, kernel flags mean {want:?}: {}{}",
            if match_ { "match" } else { "MISMATCH" },
            if o.check_transfers { "" } else { " (informational without --check-transfers)" }
        );
            if o.check_transfers && !match_ {
                ok = false;
            }
        }
        let required = o.require.contains(xfer);
        let majority = 2 * hits > o.attempts;
        println!(
            "[mpi-run] vpic -x {xfer}: rank {} named the straggler of dataset.write in {hits} of {} runs: {}",
            o.slow_rank,
            o.attempts,
            match (majority, required) {
                (true, _) => "OK (a majority)",
                (false, true) => "FAILED (needs a majority)",
                (false, false) => "not a majority (informational for this transfer mode)",
            }
        );
        if required && !majority {
            ok = false;
        }

        let traces = o.out.join(format!("traces-bdcats-{xfer}"));
        let args: Vec<String> = ["-d", &data.display().to_string(), "-x", xfer]
            .map(String::from)
            .to_vec();
        let log = o.out.join(format!("bdcats-{xfer}.log"));
        traced_run(
            o,
            &format!("bdcats_read-mpi -x {xfer}"),
            &bin.join("bdcats_read-mpi"),
            &args,
            &traces,
            &log,
        )
        .map_err(|e| Error::new(format!("{e}\n{}", tail(&log, 10))))?;
        report(
            o,
            &traces,
            &o.out.join(format!("report-bdcats-{xfer}.json")),
        )?;
    }
    println!("{}", if ok { "RESULT: OK" } else { "RESULT: FAILED" });
    Ok(ok)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_from_trace_names() {
        assert_eq!(rank_of_trace_name("h5prov-r3-p1234.trace.csv"), Some(3));
        assert_eq!(rank_of_trace_name("h5prov-r4-p1234.trace.bin.zst"), Some(4));
        assert_eq!(rank_of_trace_name("h5prov-r12-p9.trace.jsonl"), Some(12));
        assert_eq!(rank_of_trace_name("h5prov-r3-p1234.objects.csv"), None);
        assert_eq!(rank_of_trace_name("h5prov-rx-p1.trace.csv"), None);
        assert_eq!(rank_of_trace_name("run-p1-r0.trace.csv"), Some(0));
    }

    #[test]
    fn stragglers_from_report_json() {
        let rep: Value = serde_json::json!({
            "straggler_ranks": [
                {"op": "group.create", "outliers": [{"rank": 0}]},
                {"op": "dataset.write", "outliers": [{"rank": 3, "total_ns": 9}, {"rank": 1}]}
            ],
            "rank_ops": [
                {"rank": 1, "op": "dataset.write", "total_ns": 5},
                {"rank": 0, "op": "dataset.write", "total_ns": 4},
                {"rank": 0, "op": "file.create", "total_ns": 7}
            ]
        });
        assert_eq!(straggler_ranks(&rep, "dataset.write"), Some(vec![3, 1]));
        assert_eq!(straggler_ranks(&rep, "dataset.read"), Some(vec![]));
        assert_eq!(straggler_ranks(&serde_json::json!({}), "x"), None);
        assert_eq!(rank_totals(&rep, "dataset.write"), [(0, 4), (1, 5)]);
        let t = serde_json::json!({"transfers": {"by_mode": [
            {"requested": "collective", "actual": "collective", "count": 60},
            {"requested": "collective", "actual": "independent", "count": 4},
            {"requested": "independent", "actual": "independent", "count": 2}
        ]}});
        assert_eq!(requested_counts(&t), Some((2, 64)));
        assert_eq!(requested_counts(&rep), None);
        assert_eq!(expected_transfers("coll", 64), (0, 64));
        assert_eq!(expected_transfers("ind", 64), (64, 0));
    }
}

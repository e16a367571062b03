//! `h5prov-bench`: runs the interleaved overhead benchmark and writes the report.
#![forbid(unsafe_code)]

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

use h5prov_bench::analyzer::{self, AnalyzerSettings};
use h5prov_bench::config::{Mode, Settings, Sizes, Workload};
use h5prov_bench::BenchError;

/// Overhead of h5prov next to native HDF5 and HDF5's C pass_through connector.
///
/// Builds workloads/ with workloads/build.sh, runs each workload as 1 and 4
/// processes in every mode, modes interleaved (round r starts at mode r mod M),
/// and writes report.md and report.json. h5prov modes are skipped with a note
/// when libh5prov.so is not in the plugin directory (see --require-h5prov).
/// `--all` then runs the analyzer benchmark too (analyzer.md, analyzer.json);
/// `h5prov-bench analyzer` runs only that.
#[derive(Parser, Debug)]
#[command(name = "h5prov-bench", version)]
struct Cli {
    #[command(subcommand)]
    cmd: Option<Cmd>,
    #[command(flatten)]
    run: RunArgs,
}

#[derive(Subcommand, Debug)]
enum Cmd {
    /// Analyzer benchmark: `h5prov report` against pandas (bench/pandas_aggregate.py) on
    /// 10M real trace records in 64 process files; writes analyzer.md and analyzer.json.
    Analyzer(AnalyzerArgs),
    /// Collector benchmark: `h5prov collect` pinned to one core; its ingest rate (events/s)
    /// and its memory and /metrics at many label sets. Run it as `taskset -c 1
    /// h5prov-bench collector` so that the senders stay off the collector's core.
    Collector(CollectorArgs),
}

/// Options of `h5prov-bench collector`.
#[derive(Args, Debug)]
struct CollectorArgs {
    /// The h5prov binary [default: <repo>/target/release/h5prov].
    #[arg(long)]
    h5prov: Option<PathBuf>,
    /// Another h5prov binary (e.g. main's) measured the same way, first.
    #[arg(long)]
    baseline: Option<PathBuf>,
    /// The core the collector is pinned to.
    #[arg(long, default_value_t = 0)]
    cpu: usize,
    /// Event messages of the ingest phase.
    #[arg(long, default_value_t = 2_000_000)]
    events: u64,
    /// Connections (ranks) sending them.
    #[arg(long, default_value_t = 4)]
    senders: u64,
    /// Label sets of the cardinality phase.
    #[arg(long, default_value_t = 100_000)]
    series: u64,
}

/// Options of `h5prov-bench analyzer`.
#[derive(Args, Debug, Default)]
struct AnalyzerArgs {
    /// Smoke run: 200k records in 4 files, 2 rounds.
    #[arg(long)]
    quick: bool,
    /// Trace records in the set [default: 10000000; 200000 with --quick].
    #[arg(long)]
    records: Option<u64>,
    /// Process files (ranks) in the set [default: 64; 4 with --quick].
    #[arg(long)]
    files: Option<usize>,
    /// Interleaved rounds [default: 3; 2 with --quick].
    #[arg(long)]
    rounds: Option<usize>,
    /// The h5prov binary to time [default: built by `cargo build --release -p h5prov-analyzer`].
    #[arg(long)]
    h5prov: Option<PathBuf>,
    /// Time the analyzer only (no pandas run, no agreement check).
    #[arg(long)]
    no_pandas: bool,
    /// Python interpreter with pandas (and duckdb, for the DuckDB line; skipped with a
    /// message when it cannot import duckdb).
    #[arg(long, default_value = "python3")]
    python: String,
    /// Make the source traces and the set again even when cached.
    #[arg(long)]
    regenerate: bool,
    /// Only make (or find) the trace set, then exit: the benchmark runs this as a child
    /// process, so that the memory of making the set is not counted in the measured
    /// programs' peak RSS (Linux adds the parent's RSS at `exec` to a child's).
    #[arg(long, hide = true)]
    prepare_set: bool,
    /// Directory holding libh5prov.so (writes the source traces) [default: <repo>/.deps/plugins].
    #[arg(long)]
    plugin_path: Option<PathBuf>,
    /// Report directory [default: <repo>/target/bench-report].
    #[arg(long)]
    out: Option<PathBuf>,
    /// Cache and scratch directory [default: <repo>/target/bench-work/analyzer].
    #[arg(long)]
    work_dir: Option<PathBuf>,
    /// Object counts of the many-objects (PyTables-like) line, comma-separated
    /// [default: 10000,100000,1000000; 1000,3000 with --quick; 0 skips the line].
    #[arg(long, value_delimiter = ',')]
    objects: Vec<u64>,
    /// Run only the many-objects line (on the source traces; no 10M set, no pandas); writes
    /// analyzer-objects.md and analyzer-objects.json.
    #[arg(long)]
    objects_only: bool,
}

#[derive(Args, Debug)]
struct RunArgs {
    /// Smoke run: 2 rounds, tiny sizes (used by the tests; numbers are meaningless).
    #[arg(long)]
    quick: bool,
    /// Interleaved rounds [default: 5, 2 with --quick].
    #[arg(long)]
    rounds: Option<usize>,
    /// Modes, comma-separated: native, pass_through, h5prov-{summary,dataset,element}-{csv,jsonl,bin} [default: all].
    #[arg(long, value_delimiter = ',')]
    modes: Vec<String>,
    /// Workloads, comma-separated: metadata-heavy, vpic-write, bdcats-read [default: all].
    #[arg(long, value_delimiter = ',')]
    workloads: Vec<String>,
    /// Process counts, comma-separated [default: 1,4].
    #[arg(long, value_delimiter = ',')]
    procs: Vec<usize>,
    /// Directory holding libh5prov.so [default: <repo>/.deps/plugins].
    #[arg(long)]
    plugin_path: Option<PathBuf>,
    /// Directory holding a second libh5prov.so (e.g. an older build) to measure in the
    /// same interleaved rounds: each h5prov mode gets a `baseline-` twin that loads it with
    /// the same options, unless --modes names baseline- modes itself.
    #[arg(long, value_name = "DIR")]
    baseline_plugin_path: Option<PathBuf>,
    /// Report directory [default: <repo>/target/bench-report].
    #[arg(long)]
    out: Option<PathBuf>,
    /// Scratch directory for workload binaries, HDF5 files and traces [default: <repo>/target/bench-work].
    #[arg(long)]
    work_dir: Option<PathBuf>,
    /// Fail instead of skipping the h5prov modes when libh5prov.so is missing.
    #[arg(long)]
    require_h5prov: bool,
    /// Also measure metadata-heavy instructions per HDF5 call under valgrind --tool=callgrind.
    #[arg(long)]
    callgrind: bool,
    /// Run every timed workload process on these CPUs (`taskset -c LIST`, e.g. `1`): one
    /// CPU's caches and no migrations, so rounds spread less. Stated in the report.
    #[arg(long, value_name = "LIST")]
    pin: Option<String>,
    /// Only the callgrind measurement (no timed runs).
    #[arg(long)]
    callgrind_only: bool,
    /// metadata_heavy iterations for the two callgrind runs, "N1,N2" [default: 300,1300; 50,150 with --quick].
    #[arg(long, value_delimiter = ',', num_args = 2)]
    callgrind_iters: Vec<u64>,
    /// metadata_heavy -n (15 HDF5 calls per iteration).
    #[arg(long)]
    meta_iters: Option<u64>,
    /// vpic_write -p: particles per process.
    #[arg(long)]
    vpic_particles: Option<u64>,
    /// vpic_write -t: timesteps.
    #[arg(long)]
    vpic_timesteps: Option<u64>,
    /// The whole suite: after the overhead benchmark, run the analyzer benchmark with its
    /// defaults (its --quick size with --quick), into the same report directory.
    #[arg(long)]
    all: bool,
    /// MPI mode: build the -mpi workloads against the parallel HDF5 (.deps/hdf5-parallel)
    /// and start each group as `mpirun -np N` (one shared file, MPI-IO). Defaults become
    /// --procs 4, --workloads vpic-write,bdcats-read, --plugin-path .deps/plugins-parallel,
    /// --out target/bench-report-mpi, --work-dir target/bench-work-mpi. No --callgrind.
    #[arg(long)]
    mpi: bool,
}

fn repo_root() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().unwrap_or(manifest).to_path_buf()
}

fn settings(a: RunArgs) -> Result<(Settings, bool), BenchError> {
    let repo = repo_root();
    let mut sizes = if a.quick { Sizes::QUICK } else { Sizes::FULL };
    if let Some(n) = a.meta_iters {
        sizes.meta_iters = n;
    }
    if let Some(n) = a.vpic_particles {
        sizes.vpic_particles = n;
    }
    if let Some(n) = a.vpic_timesteps {
        sizes.vpic_timesteps = n;
    }
    let mut modes = if a.modes.is_empty() {
        Mode::all()
    } else {
        a.modes
            .iter()
            .map(|s| Mode::parse(s))
            .collect::<Result<Vec<_>, _>>()
            .map_err(BenchError::new)?
    };
    if a.baseline_plugin_path.is_some() && !modes.iter().any(Mode::is_baseline) {
        // Each twin right after its mode, so the pair runs side by side in every round.
        modes = modes
            .into_iter()
            .flat_map(|m| std::iter::once(m).chain(m.as_baseline()))
            .collect();
    }
    if a.mpi && (a.callgrind || a.callgrind_only) {
        return Err(BenchError::new(
            "--mpi with --callgrind: the callgrind measurement is serial; run it without --mpi",
        ));
    }
    let workloads = if a.callgrind_only {
        Vec::new()
    } else if a.workloads.is_empty() && a.mpi {
        vec![Workload::VpicWrite, Workload::BdcatsRead]
    } else if a.workloads.is_empty() {
        Workload::all()
    } else {
        a.workloads
            .iter()
            .map(|s| Workload::parse(s))
            .collect::<Result<Vec<_>, _>>()
            .map_err(BenchError::new)?
    };
    let procs = if a.procs.is_empty() && a.mpi {
        vec![4]
    } else if a.procs.is_empty() {
        vec![1, 4]
    } else {
        a.procs
    };
    if procs.contains(&0) {
        return Err(BenchError::new(
            "--procs: process counts must be at least 1",
        ));
    }
    let rounds = a.rounds.unwrap_or(if a.quick { 2 } else { 5 });
    if rounds == 0 {
        return Err(BenchError::new("--rounds must be at least 1"));
    }
    let callgrind_iters = match a.callgrind_iters.as_slice() {
        [x, y] => (*x, *y),
        _ if a.quick => (50, 150),
        _ => (300, 1300),
    };
    let suffix = if a.mpi { "-mpi" } else { "" };
    let work_dir = a
        .work_dir
        .unwrap_or_else(|| repo.join(format!("target/bench-work{suffix}")));
    let plugins = if a.mpi {
        ".deps/plugins-parallel"
    } else {
        ".deps/plugins"
    };
    Ok((
        Settings {
            bin_dir: work_dir.join("bin"),
            work_dir,
            out_dir: a
                .out
                .unwrap_or_else(|| repo.join(format!("target/bench-report{suffix}"))),
            plugin_path: a.plugin_path.unwrap_or_else(|| repo.join(plugins)),
            baseline_plugin_path: a.baseline_plugin_path,
            repo,
            modes,
            workloads,
            procs,
            rounds,
            sizes,
            quick: a.quick,
            callgrind: a.callgrind || a.callgrind_only,
            callgrind_iters,
            mpi: a.mpi,
            pin: a.pin,
            collector: None,
        },
        a.require_h5prov,
    ))
}

/// Resolves the analyzer benchmark's options: builds h5prov unless given, checks pandas.
fn analyzer_settings(a: AnalyzerArgs) -> Result<AnalyzerSettings, BenchError> {
    let repo = repo_root();
    let h5prov = match a.h5prov {
        Some(p) => p,
        None => {
            eprintln!("h5prov-bench: cargo build --release -p h5prov-analyzer --bin h5prov");
            analyzer::build_h5prov(&repo, true)?
        }
    };
    let python = if a.no_pandas {
        None
    } else {
        analyzer::pandas_version(&a.python).map_err(|e| {
            BenchError::new(format!(
                "{e}; or pass --no-pandas to time the analyzer only"
            ))
        })?;
        Some(a.python.clone())
    };
    let duckdb_python = analyzer::duckdb_version(&a.python).map(|_| a.python.clone());
    if let Err(e) = &duckdb_python {
        eprintln!("h5prov-bench: DuckDB line skipped: {e}");
    }
    let rounds = a.rounds.unwrap_or(if a.quick { 2 } else { 3 });
    if rounds == 0 {
        return Err(BenchError::new("--rounds must be at least 1"));
    }
    Ok(AnalyzerSettings {
        work_dir: a
            .work_dir
            .unwrap_or_else(|| repo.join("target/bench-work/analyzer")),
        out_dir: a.out.unwrap_or_else(|| repo.join("target/bench-report")),
        plugin_path: a.plugin_path.unwrap_or_else(|| repo.join(".deps/plugins")),
        repo,
        h5prov,
        records: a.records.unwrap_or(if a.quick {
            analyzer::QUICK_RECORDS
        } else {
            analyzer::DEFAULT_RECORDS
        }),
        files: a.files.unwrap_or(if a.quick {
            analyzer::QUICK_FILES
        } else {
            analyzer::DEFAULT_FILES
        }),
        rounds,
        python,
        duckdb_python,
        quick: a.quick,
        regenerate: a.regenerate,
        objects: if a.objects.is_empty() {
            if a.quick {
                h5prov_bench::objects::QUICK_OBJECTS.to_vec()
            } else {
                h5prov_bench::objects::DEFAULT_OBJECTS.to_vec()
            }
        } else {
            a.objects.into_iter().filter(|&k| k > 0).collect()
        },
    })
}

fn run_analyzer(s: &AnalyzerSettings) -> Result<(), BenchError> {
    let report = analyzer::run(s, &mut |line| eprintln!("{line}"))?;
    let md = analyzer::write_report(&report, &s.out_dir)?;
    println!("{md}");
    eprintln!(
        "h5prov-bench: wrote {} and {}",
        s.out_dir.join("analyzer.md").display(),
        s.out_dir.join("analyzer.json").display()
    );
    if report.python.is_some() && !report.agreement.ok {
        return Err(BenchError::new(
            "the analyzer and pandas disagree on counts or totals (see the report)",
        ));
    }
    Ok(())
}

fn run_collector(a: &CollectorArgs) -> Result<(), BenchError> {
    let mine = a
        .h5prov
        .clone()
        .unwrap_or_else(|| repo_root().join("target/release/h5prov"));
    println!("| binary | wire | events | events/s (1 core) | label sets | RSS MiB | peak MiB | /metrics MB | /metrics s |");
    println!("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    // The baseline (a collector before the binary framing) reads JSON lines only.
    for (name, bin, binary) in a
        .baseline
        .iter()
        .map(|b| ("baseline", b, false))
        .chain([("h5prov", &mine, false), ("h5prov", &mine, true)])
    {
        let r = h5prov_bench::collector::run(bin, a.cpu, a.events, a.senders, a.series, binary)
            .map_err(|e| BenchError::new(format!("{name} ({}): {e}", bin.display())))?;
        println!(
            "| {name} | {} | {} | {:.0} | {} | {:.1} | {:.1} | {:.1} | {:.3} |",
            if binary { "bin" } else { "jsonl" },
            r.events,
            r.events_per_s,
            r.series,
            r.rss_kib as f64 / 1024.0,
            r.hwm_kib as f64 / 1024.0,
            r.metrics_bytes as f64 / 1e6,
            r.metrics_s
        );
    }
    Ok(())
}

fn main_inner(cli: Cli) -> Result<(), BenchError> {
    if let Some(Cmd::Collector(a)) = &cli.cmd {
        return run_collector(a);
    }
    if let Some(Cmd::Analyzer(a)) = cli.cmd {
        let prepare = a.prepare_set;
        let objects_only = a.objects_only;
        let s = analyzer_settings(AnalyzerArgs {
            no_pandas: a.no_pandas || objects_only,
            ..a
        })?;
        if prepare {
            return analyzer::prepare_set(&s, &mut |line| eprintln!("{line}")).map(|_| ());
        }
        if objects_only {
            let md = analyzer::run_objects_only(&s, &mut |line| eprintln!("{line}"))?;
            println!("{md}");
            return Ok(());
        }
        return run_analyzer(&s);
    }
    let all = cli.run.all;
    if all && cli.run.mpi {
        return Err(BenchError::new(
            "--all with --mpi: the analyzer benchmark is serial; run `h5prov-bench analyzer` on its own",
        ));
    }
    // Resolved before the overhead runs, so a missing pandas or a broken analyzer build
    // fails at once rather than after them.
    let analyzer_run = if all {
        let work = cli
            .run
            .work_dir
            .clone()
            .unwrap_or_else(|| repo_root().join("target/bench-work"));
        Some(analyzer_settings(AnalyzerArgs {
            quick: cli.run.quick,
            plugin_path: cli.run.plugin_path.clone(),
            out: cli.run.out.clone(),
            work_dir: Some(work.join("analyzer")),
            python: "python3".into(),
            ..AnalyzerArgs::default()
        })?)
    } else {
        None
    };
    let (mut s, require) = settings(cli.run)?;
    let skipped = h5prov_bench::filter_modes(&mut s, require)?;
    for sk in &skipped {
        eprintln!("h5prov-bench: skipping {sk} (pass --require-h5prov to make this an error)");
    }
    let report = h5prov_bench::run(&s, skipped, &mut |line| eprintln!("{line}"))?;
    let md = h5prov_bench::write_report(&report, &s.out_dir)?;
    println!("{md}");
    eprintln!(
        "h5prov-bench: wrote {} and {}",
        s.out_dir.join("report.md").display(),
        s.out_dir.join("report.json").display()
    );
    match analyzer_run {
        Some(a) => run_analyzer(&a),
        None => Ok(()),
    }
}

fn main() -> ExitCode {
    match main_inner(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("h5prov-bench: error: {e}");
            ExitCode::FAILURE
        }
    }
}

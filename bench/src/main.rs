//! `h5prov-bench`: runs the interleaved overhead benchmark and writes the report.
#![forbid(unsafe_code)]

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

use h5prov_bench::config::{Mode, Settings, Sizes, Workload};
use h5prov_bench::BenchError;

/// Overhead of h5prov next to native HDF5 and HDF5's C pass_through connector.
///
/// Builds workloads/ with workloads/build.sh, runs each workload as 1 and 4
/// processes in every mode, modes interleaved (round r starts at mode r mod M),
/// and writes report.md and report.json. h5prov modes are skipped with a note
/// when libh5prov.so is not in the plugin directory (see --require-h5prov).
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
    /// Analyzer benchmark (10M records over 64 files, `h5prov report` vs pandas): not yet.
    Analyzer,
}

#[derive(Args, Debug)]
struct RunArgs {
    /// Smoke run: 2 rounds, tiny sizes (used by the tests; numbers are meaningless).
    #[arg(long)]
    quick: bool,
    /// Interleaved rounds [default: 5, 2 with --quick].
    #[arg(long)]
    rounds: Option<usize>,
    /// Modes, comma-separated: native, pass_through, h5prov-{summary,dataset,element}-{csv,jsonl} [default: all].
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
    let modes = if a.modes.is_empty() {
        Mode::all()
    } else {
        a.modes
            .iter()
            .map(|s| Mode::parse(s))
            .collect::<Result<Vec<_>, _>>()
            .map_err(BenchError::new)?
    };
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
        },
        a.require_h5prov,
    ))
}

fn main_inner(cli: Cli) -> Result<(), BenchError> {
    if let Some(Cmd::Analyzer) = cli.cmd {
        return Err(BenchError::new(
            "the analyzer benchmark is not implemented yet (issue 6, part 4); \
             bench/pandas_aggregate.py is the pandas side",
        ));
    }
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
    Ok(())
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

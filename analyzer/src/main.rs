//! `h5prov`: the command-line front end of the analyzer library. Thin: parses flags,
//! sets up the thread pool and progress bar, calls the library, writes its bytes.
// Unsafe code only in `malloc` (one `mallopt` call), which allows it for itself.
#![deny(unsafe_code)]

mod malloc;

use clap::{ArgGroup, Args, Parser, Subcommand, ValueEnum};
use h5prov_analyzer::aggregate::{aggregate_all, Aggregate};
use h5prov_analyzer::analysis::stats;
use h5prov_analyzer::analysis::Report;
use h5prov_analyzer::export::{parquet, perfetto};
use h5prov_analyzer::insights::{self, Thresholds};
use h5prov_analyzer::read::{discover, discover_with, merged, Error, Inputs, ReadOptions};
use h5prov_analyzer::render::compare;
use h5prov_analyzer::render::{self, terminal::TermOptions};
use h5prov_analyzer::report::analyze;
use std::ffi::OsStr;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "h5prov",
    version,
    about = "Analyze h5prov HDF5 traces: hot functions, stragglers, objects, I/O phases, insights"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Report on a trace directory or a Parquet export (terminal by default; --json, --csv,
    /// --html).
    Report(ReportArgs),
    /// Export traces as Chrome trace-event JSON for the Perfetto UI (--perfetto), or add them
    /// to a Parquet dataset that DuckDB, Polars, pandas and Spark query (--parquet).
    Export(ExportArgs),
    /// Compare two runs: per-operation ratios (B/A) of total time, p50 and p99.
    Compare(CompareArgs),
    /// Merge a trace directory into one compressed file that every command reads like the
    /// directory.
    Merge(MergeArgs),
    /// Print trace or objects files (any format, compressed or not) as CSV or JSONL: how a
    /// `format=bin` trace is read with other tools.
    Cat(CatArgs),
    /// Receive the live streams of jobs traced with `stream=` (TCP and Unix sockets) and
    /// serve them as Prometheus metrics at http://METRICS/metrics (and to `h5prov top` at
    /// /top.json).
    Collect(CollectArgs),
    /// The provenance chains of a file or dataset (`file.h5` or `file.h5:/path`) across the
    /// jobs given: who generated it, from what (recursively), and who used it.
    Lineage(LineageArgs),
    /// A live terminal view of a collector: jobs, per-rank and per-operation rates, the
    /// slowest recent calls, bytes per second over the last minute. `q` quits.
    Top(TopArgs),
    /// Run a command with h5prov loaded into its HDF5: sets HDF5_PLUGIN_PATH (the plugin
    /// shipped with this h5prov first) and HDF5_VOL_CONNECTOR, runs CMD, returns its exit
    /// status (128+N when signal N ended it). `h5prov run --path traces -- ./app args`.
    Run(RunArgs),
}

#[derive(Args)]
struct RunArgs {
    /// Trace directory (`path=`), made absolute so every process writes there.
    #[arg(long, value_name = "DIR", default_value = "h5prov-traces")]
    path: PathBuf,
    /// What is recorded (`level=`).
    #[arg(long, value_name = "L", value_parser = ["off", "summary", "file", "group", "dataset", "element", "1", "2", "3"])]
    level: Option<String>,
    /// Trace file format (`format=`).
    #[arg(long, value_name = "F", value_parser = ["bin", "csv", "jsonl"])]
    format: Option<String>,
    /// Also stream the records to `h5prov collect` at HOST:PORT or unix:PATH (`stream=`).
    #[arg(long, value_name = "ADDR")]
    stream: Option<String>,
    /// Another connector option, KEY=VALUE (`max_size=512M`, `buffer=4M`, ...; repeatable).
    #[arg(long = "option", value_name = "KEY=VALUE")]
    options: Vec<String>,
    /// Print the report of the trace directory after the command ends.
    #[arg(long)]
    report: bool,
    /// Print the environment that would be set, and run nothing.
    #[arg(long)]
    print_env: bool,
    /// The command and its arguments (after `--`).
    #[arg(
        required = true,
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "CMD"
    )]
    cmd: Vec<std::ffi::OsString>,
}

/// `h5prov run`: the command with h5prov loaded; its exit status.
fn run_cmd(a: RunArgs) -> Result<ExitCode, Error> {
    use h5prov_analyzer::live::run;
    let exe = std::env::current_exe()
        .map_err(|e| Error::Other(format!("cannot find the h5prov executable: {e}")))?;
    let plugin = run::find_plugin(&exe, std::env::var_os(run::PLUGIN_ENV).as_deref())
        .map_err(Error::Other)?;
    let cwd = std::env::current_dir()
        .map_err(|e| Error::Other(format!("cannot read the working directory: {e}")))?;
    let path = cwd.join(&a.path);
    let opts = run::RunOptions {
        path: path.clone(),
        level: a.level,
        format: a.format,
        stream: a.stream,
        extra: a.options,
    };
    let conn = run::vol_connector(&opts, std::env::var_os("HDF5_VOL_CONNECTOR").as_deref())
        .map_err(Error::Other)?;
    let plugin_path = run::plugin_path(&plugin, std::env::var_os("HDF5_PLUGIN_PATH").as_deref());
    if a.print_env {
        stdout_write(&format!(
            "HDF5_PLUGIN_PATH={}\nHDF5_VOL_CONNECTOR={conn}\n",
            plugin_path.to_string_lossy()
        ))?;
        return Ok(ExitCode::SUCCESS);
    }
    if a.report && std::fs::read_dir(&path).is_ok_and(|mut d| d.next().is_some()) {
        eprintln!(
            "h5prov run: warning: {} is not empty: --report reads the traces already in it too",
            path.display()
        );
    }
    let (prog, args) = a.cmd.split_first().expect("clap requires CMD");
    let status = std::process::Command::new(prog)
        .args(args)
        .env("HDF5_PLUGIN_PATH", &plugin_path)
        .env("HDF5_VOL_CONNECTOR", &conn)
        .status();
    let status = match status {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: cannot run {}: {e}", prog.to_string_lossy());
            // As shells do: 127 when the command is not found, 126 when it cannot run.
            let code = if e.kind() == std::io::ErrorKind::NotFound {
                127
            } else {
                126
            };
            return Ok(ExitCode::from(code));
        }
    };
    let code = run::exit_code(status);
    // HDF5 carries on natively when it cannot load a connector: say so rather than leave
    // the user believing the run was traced.
    if !discover(&path).is_ok_and(|i| !i.metas.is_empty()) {
        eprintln!(
            "h5prov run: warning: no h5prov trace in {}: the command did not start HDF5, or \
             its HDF5 did not load {} from {} (see HDF5's error messages above)",
            path.display(),
            run::PLUGIN,
            plugin.display()
        );
        if a.report {
            return Ok(ExitCode::from(if code == 0 { 1 } else { code }));
        }
    }
    if a.report {
        let r = Cli::try_parse_from([OsStr::new("h5prov"), OsStr::new("report"), path.as_os_str()])
            .map_err(|e| Error::Other(e.to_string()))?;
        let Cmd::Report(ra) = r.cmd else {
            unreachable!("parsed a report command")
        };
        if let Err(e) = report(ra) {
            eprintln!("error: {e}");
            return Ok(ExitCode::from(if code == 0 { 1 } else { code }));
        }
    }
    Ok(ExitCode::from(code))
}

#[derive(Args)]
struct TopArgs {
    /// The collector's --metrics address, HOST:PORT.
    #[arg(long, value_name = "ADDR")]
    collector: String,
    /// Milliseconds between polls (and the window of the rates).
    #[arg(long, value_name = "MS", default_value_t = 1000,
          value_parser = clap::value_parser!(u64).range(100..=60_000))]
    interval: u64,
    /// The collector's token file (its --token-file), sent as `Authorization: Bearer`.
    #[arg(long, value_name = "FILE")]
    token_file: Option<PathBuf>,
    /// Connect in TLS, trusting only this PEM CA (or the collector's self-signed
    /// certificate): for a collector run with --tls-cert.
    #[arg(long, value_name = "FILE")]
    tls_ca: Option<PathBuf>,
}

#[derive(Args)]
struct CollectArgs {
    /// Where connectors send: HOST:PORT or unix:PATH (repeatable; port 0 picks a free port,
    /// printed as `listen ADDR` on stdout).
    #[arg(long, value_name = "ADDR", required = true)]
    listen: Vec<String>,
    /// The Prometheus endpoint's HOST:PORT (printed as `metrics ADDR` on stdout).
    #[arg(long, value_name = "ADDR")]
    metrics: String,
    /// Also write every accepted message to rolling JSONL files in DIR.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Size of each rolling file, MiB.
    #[arg(long, value_name = "MIB", default_value_t = 64)]
    roll_mib: u64,
    /// Stream connections open at once; more are closed at once and counted.
    #[arg(long, value_name = "N", default_value_t = h5prov_analyzer::live::collect::Limits::default().max_connections)]
    max_connections: usize,
    /// Label sets (job, rank, operation) held; messages of new ones beyond are dropped and
    /// counted.
    #[arg(long, value_name = "N", default_value_t = h5prov_analyzer::live::collect::Limits::default().max_series)]
    max_series: usize,
    /// Seconds after its last message a job is forgotten (its series leave /metrics).
    #[arg(long, value_name = "SECS", default_value_t = 600,
          value_parser = clap::value_parser!(u64).range(1..))]
    job_expiry: u64,
    /// Seconds a stream connection may stay silent before it is closed (a connector
    /// reconnects when it next has something to send).
    #[arg(long, value_name = "SECS", default_value_t = 3600,
          value_parser = clap::value_parser!(u64).range(1..))]
    idle_timeout: u64,
    /// A file (mode 600) holding a shared-secret token: stream clients must prove they hold
    /// it (`stream_token_file=`), and HTTP clients send it as `Authorization: Bearer`.
    #[arg(long, value_name = "FILE")]
    token_file: Option<PathBuf>,
    /// TLS on the TCP stream ports and the metrics port: this PEM certificate (chain) ...
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    tls_cert: Option<PathBuf>,
    /// ... and its PEM private key.
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    tls_key: Option<PathBuf>,
    /// Permissions of the unix: sockets, octal (600: only the collector's user may send).
    #[arg(long, value_name = "OCTAL", default_value = "600", value_parser = parse_mode)]
    unix_mode: u32,
}

/// An octal file mode of at most 0777.
fn parse_mode(s: &str) -> Result<u32, String> {
    u32::from_str_radix(s, 8)
        .ok()
        .filter(|m| *m <= 0o777)
        .ok_or_else(|| format!("{s:?} is not an octal mode between 0 and 777"))
}

#[derive(Args, Clone)]
struct ReadArgs {
    /// Count and skip malformed rows instead of failing.
    #[arg(long)]
    lenient: bool,
    /// Worker threads (default: all cores).
    #[arg(long, value_name = "N")]
    threads: Option<usize>,
    /// Never show a progress bar.
    #[arg(long)]
    no_progress: bool,
}

#[derive(Args)]
struct LineageArgs {
    /// The file (`sim.h5`) or dataset (`ana.h5:/stats`): matched by the path its processes
    /// opened it by, or a tail of it.
    target: String,
    /// Trace directories, merged files or Parquet exports (every job), typically one per
    /// job of a workflow.
    #[arg(required = true, value_name = "TRACES")]
    inputs: Vec<PathBuf>,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

/// The serialisations of `h5prov export --prov`.
#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
enum ProvFormat {
    /// W3C PROV-JSON.
    Json,
    /// PROV-O in Turtle.
    Turtle,
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
enum ColorChoice {
    Auto,
    Always,
    Never,
}

#[derive(Args)]
struct ThresholdArgs {
    /// Modified Z-score above which calls/ranks are stragglers.
    #[arg(long, value_name = "Z", default_value_t = stats::MODIFIED_Z_THRESHOLD)]
    z_threshold: f64,
    /// Drishti imbalance (slowest − fastest)/total above which the slowest rank straggles.
    #[arg(long, value_name = "FRACTION", default_value_t = insights::IMBALANCE)]
    imbalance: f64,
    /// A straggler call must also take at least this many times the median.
    #[arg(long, value_name = "RATIO", default_value_t = insights::CALL_MIN_RATIO)]
    call_min_ratio: f64,
    /// A Z-score straggler rank must also have at least this many times the median total.
    #[arg(long, value_name = "RATIO", default_value_t = insights::RANK_MIN_RATIO)]
    rank_min_ratio: f64,
    /// p99/p50 ratio that makes an operation tail-heavy.
    #[arg(long, value_name = "RATIO", default_value_t = insights::TAIL_RATIO)]
    tail_ratio: f64,
    /// Calls an operation needs before its tail is judged.
    #[arg(long, value_name = "N", default_value_t = insights::TAIL_MIN_CALLS)]
    tail_min_calls: u64,
    /// Accesses below this many bytes are small.
    #[arg(long, value_name = "BYTES", default_value_t = insights::SMALL_IO_BYTES)]
    small_io_bytes: u64,
    /// Fraction of small accesses that triggers the small-I/O insight.
    #[arg(long, value_name = "FRACTION", default_value_t = insights::SMALL_IO_FRACTION)]
    small_io_fraction: f64,
    /// Metadata share of call time that triggers the metadata insight.
    #[arg(long, value_name = "FRACTION", default_value_t = insights::METADATA_FRACTION)]
    metadata_fraction: f64,
    /// Opens of one object per process that count as churn.
    #[arg(long, value_name = "N", default_value_t = insights::CHURN_OPENS)]
    churn_opens: u64,
    /// dataset.close share of a read-only file's time that counts as slow.
    #[arg(long, value_name = "FRACTION", default_value_t = insights::CLOSE_FRACTION)]
    close_fraction: f64,
    /// Datasets smaller than this are tiny.
    #[arg(long, value_name = "BYTES", default_value_t = insights::TINY_DATASET_BYTES)]
    tiny_dataset_bytes: u64,
    /// Tiny datasets needed for the many-tiny-datasets insight.
    #[arg(long, value_name = "N", default_value_t = insights::TINY_DATASET_COUNT)]
    tiny_dataset_count: u64,
    /// Small writes to one contiguous dataset that count as many partial writes.
    #[arg(long, value_name = "N", default_value_t = insights::PARTIAL_WRITES)]
    partial_writes: u64,
    /// Share of call time an operation needs before its stragglers become an insight.
    #[arg(long, value_name = "FRACTION", default_value_t = insights::MIN_OP_SHARE)]
    min_op_share: f64,
    /// Share of a collective operation's time spent waiting for the last rank before that
    /// rank is named its late-arrival straggler.
    #[arg(long, value_name = "FRACTION", default_value_t = h5prov_analyzer::analysis::collective::MIN_WAIT_SHARE)]
    late_wait_share: f64,
    /// Waiting (ns, all matched calls) a collective operation needs before a late rank is named.
    #[arg(long, value_name = "NS", default_value_t = h5prov_analyzer::analysis::collective::MIN_WAIT_NS)]
    late_min_wait_ns: u64,
    /// Stripe size of the file system holding the files, bytes (e.g. Lustre's `lfs
    /// getstripe -S`), for the alignment rule when the trace cannot tell; 0: unknown.
    #[arg(long, value_name = "BYTES", default_value_t = 0)]
    stripe_size: u64,
}

impl ThresholdArgs {
    fn thresholds(&self) -> Result<Thresholds, Error> {
        for (flag, v) in [
            ("--imbalance", self.imbalance),
            ("--small-io-fraction", self.small_io_fraction),
            ("--metadata-fraction", self.metadata_fraction),
            ("--close-fraction", self.close_fraction),
            ("--min-op-share", self.min_op_share),
            ("--late-wait-share", self.late_wait_share),
        ] {
            if !(0.0..=1.0).contains(&v) {
                return Err(Error::Other(format!(
                    "{flag} {v}: must be a fraction between 0 and 1"
                )));
            }
        }
        for (flag, v) in [
            ("--z-threshold", self.z_threshold),
            ("--tail-ratio", self.tail_ratio),
            ("--call-min-ratio", self.call_min_ratio),
            ("--rank-min-ratio", self.rank_min_ratio),
        ] {
            if !(v.is_finite() && v > 0.0) {
                return Err(Error::Other(format!(
                    "{flag} {v}: must be a positive number"
                )));
            }
        }
        Ok(Thresholds {
            z_threshold: self.z_threshold,
            imbalance: self.imbalance,
            call_min_ratio: self.call_min_ratio,
            rank_min_ratio: self.rank_min_ratio,
            tail_ratio: self.tail_ratio,
            tail_min_calls: self.tail_min_calls,
            small_io_bytes: self.small_io_bytes,
            small_io_fraction: self.small_io_fraction,
            metadata_fraction: self.metadata_fraction,
            churn_opens: self.churn_opens,
            close_fraction: self.close_fraction,
            tiny_dataset_bytes: self.tiny_dataset_bytes,
            tiny_dataset_count: self.tiny_dataset_count,
            partial_writes: self.partial_writes,
            min_op_share: self.min_op_share,
            late_wait_share: self.late_wait_share,
            late_min_wait_ns: self.late_min_wait_ns,
            stripe_size: self.stripe_size,
        })
    }
}

#[derive(Args)]
struct ReportArgs {
    /// Trace directory (searched recursively), merged file (`h5prov merge`), single file, or
    /// Parquet export (`h5prov export --parquet`).
    dir: PathBuf,
    /// The job to report on, of a Parquet export holding several.
    #[arg(long, value_name = "ID")]
    job: Option<String>,
    /// Print the report as JSON on stdout instead of the terminal report.
    #[arg(long)]
    json: bool,
    /// Also write the tables as CSV files into this directory.
    #[arg(long, value_name = "DIR")]
    csv: Option<PathBuf>,
    /// Also write a self-contained HTML report with SVG plots to this file.
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
    /// Rows per table in the terminal and HTML reports.
    #[arg(long, value_name = "N", default_value_t = 15)]
    top: usize,
    /// Color the terminal report (auto: only on a terminal and without NO_COLOR).
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto)]
    color: ColorChoice,
    #[command(flatten)]
    read: ReadArgs,
    #[command(flatten)]
    th: ThresholdArgs,
}

#[derive(Args)]
#[command(group(ArgGroup::new("to").required(true).args(["perfetto", "parquet", "prov"])))]
struct ExportArgs {
    /// Write Chrome trace-event JSON (for ui.perfetto.dev) to this file (of one trace
    /// directory).
    #[arg(long, value_name = "FILE")]
    perfetto: Option<PathBuf>,
    /// Add the traces to the Parquet dataset in this directory: tables `records/`,
    /// `objects/`, `processes/` and `files/`, one partition `job=<id>/` per job. A job
    /// already in it is refused; nothing else in it is rewritten.
    #[arg(long, value_name = "OUTDIR", conflicts_with = "perfetto")]
    parquet: Option<PathBuf>,
    /// Write the lineage of the traces (every directory given: a workflow's jobs) as W3C
    /// PROV-JSON to this file: users, programs, processes, file versions and datasets,
    /// joined across jobs on the files' identity (docs/PROVENANCE.md).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["perfetto", "parquet"])]
    prov: Option<PathBuf>,
    /// The serialisation of --prov: W3C PROV-JSON or PROV-O Turtle.
    #[arg(long, value_name = "FORMAT", default_value = "json", requires = "prov")]
    prov_format: ProvFormat,
    /// --parquet: the job id of the traces, instead of the launcher's job id that their
    /// meta files recorded (or the id derived from the run when they recorded none).
    /// --prov: of a Parquet export given as TRACES, only this job (default: every job).
    #[arg(long, value_name = "ID", conflicts_with = "perfetto")]
    job: Option<String>,
    /// Trace directories, merged files or single trace files (--perfetto: one). With
    /// --parquet, each is one run; runs with the same job id make one partition. With
    /// --prov, also Parquet exports.
    #[arg(required = true, value_name = "TRACES")]
    dirs: Vec<PathBuf>,
    #[command(flatten)]
    read: ReadArgs,
}

#[derive(Args)]
struct CompareArgs {
    /// Baseline run (A): trace directory or merged file.
    run_a: PathBuf,
    /// Other run (B): trace directory or merged file.
    run_b: PathBuf,
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
    /// Rows shown.
    #[arg(long, value_name = "N", default_value_t = 30)]
    top: usize,
    #[command(flatten)]
    read: ReadArgs,
}

#[derive(Args)]
struct MergeArgs {
    /// Trace directory (searched recursively; *.zst and *.gz files included).
    dir: PathBuf,
    /// The merged file to write (customarily `*.h5prov`); replaced if it exists.
    #[arg(short, long, value_name = "FILE")]
    output: PathBuf,
    /// Zstandard compression level (1 fastest .. 19 smallest).
    #[arg(long, value_name = "N", default_value_t = 3)]
    level: i32,
    /// Worker threads (default: all cores).
    #[arg(long, value_name = "N")]
    threads: Option<usize>,
    /// Never show a progress bar.
    #[arg(long)]
    no_progress: bool,
}

#[derive(Args)]
struct CatArgs {
    /// Trace files (`*.trace.*`) or objects files (`*.objects.*`), all of one role.
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Output encoding.
    #[arg(long, value_enum, default_value_t = CatFormat::Csv)]
    format: CatFormat,
    /// Count and skip malformed rows instead of failing.
    #[arg(long)]
    lenient: bool,
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
enum CatFormat {
    Csv,
    Jsonl,
}

/// `h5prov cat`: every record of the files, in order, through the one reader and the
/// encoders generated from the record table (one CSV header for all the files).
fn cat_cmd(a: CatArgs) -> Result<(), Error> {
    use h5prov_analyzer::read::{input::classify_input, objects::read_objects, read_trace};
    use h5prov_format::{FileRole, OBJECT_COLUMNS, TRACE_COLUMNS};
    let opts = ReadOptions { lenient: a.lenient };
    let mut roles = Vec::new();
    for f in &a.files {
        let (role, enc) = classify_input(f)
            .filter(|(r, _)| *r != FileRole::Meta)
            .ok_or_else(|| {
                Error::Other(format!(
                    "{}: not an h5prov trace or objects file (*.trace.csv|jsonl|bin, \
                     *.objects.csv|jsonl|bin, optionally .zst or .gz)",
                    f.display()
                ))
            })?;
        roles.push((role, enc));
    }
    if roles.iter().any(|(r, _)| *r != roles[0].0) {
        return Err(Error::Other(
            "cat: give trace files or objects files, not both (their columns differ)".into(),
        ));
    }
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::with_capacity(1 << 20, stdout.lock());
    let mut buf = Vec::with_capacity(1 << 16);
    let io = |e: std::io::Error| Error::Other(format!("cannot write to stdout: {e}"));
    if a.format == CatFormat::Csv {
        let cols = if roles[0].0 == FileRole::Trace {
            TRACE_COLUMNS
        } else {
            OBJECT_COLUMNS
        };
        writeln!(out, "{}", cols.join(",")).map_err(io)?;
    }
    for (f, (role, enc)) in a.files.iter().zip(roles) {
        let mut failed = None;
        let mut put = |buf: &mut Vec<u8>, out: &mut dyn Write| {
            if buf.len() >= 1 << 16 && failed.is_none() {
                failed = out.write_all(buf).err();
                buf.clear();
            }
        };
        if role == FileRole::Trace {
            read_trace(f, enc, &opts, |r| {
                match a.format {
                    CatFormat::Csv => r.write_csv(&mut buf),
                    CatFormat::Jsonl => r.write_jsonl(&mut buf),
                }
                put(&mut buf, &mut out);
            })?;
        } else {
            read_objects(f, enc, &opts, |r| {
                match a.format {
                    CatFormat::Csv => r.write_csv(&mut buf),
                    CatFormat::Jsonl => r.write_jsonl(&mut buf),
                }
                put(&mut buf, &mut out);
            })?;
        }
        if let Some(e) = failed {
            return Err(io(e));
        }
        out.write_all(&buf).map_err(io)?;
        buf.clear();
    }
    out.flush().map_err(io)
}

fn pool(threads: Option<usize>) -> Result<rayon::ThreadPool, Error> {
    let mut b = rayon::ThreadPoolBuilder::new();
    if let Some(n) = threads {
        if n == 0 {
            return Err(Error::Other("--threads 0: must be at least 1".into()));
        }
        b = b.num_threads(n);
    }
    b.build()
        .map_err(|e| Error::Other(format!("cannot start worker threads: {e}")))
}

fn progress_bar(inputs: &Inputs, ra: &ReadArgs) -> Option<indicatif::ProgressBar> {
    bar(inputs, ra.no_progress, "reading traces")
}

fn bar(inputs: &Inputs, no_progress: bool, what: &str) -> Option<indicatif::ProgressBar> {
    bar_of(inputs.total_bytes(), no_progress, what)
}

/// A progress bar over `total` bytes on stderr, only when stderr is a terminal.
fn bar_of(total: u64, no_progress: bool, what: &str) -> Option<indicatif::ProgressBar> {
    if no_progress || !std::io::stderr().is_terminal() {
        return None;
    }
    let pb = indicatif::ProgressBar::new(total);
    pb.set_style(
        indicatif::ProgressStyle::with_template(&format!(
            "{{spinner}} {what} {{bar:30}} {{bytes}}/{{total_bytes}} ({{bytes_per_sec}}, {{eta}})"
        ))
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    Some(pb)
}

/// Reads one directory (or job `job` of a Parquet export) with the pool and a progress bar,
/// and prints read warnings once.
fn load(
    dir: &Path,
    job: Option<&str>,
    ra: &ReadArgs,
    pool: &rayon::ThreadPool,
) -> Result<Aggregate, Error> {
    let opts = ReadOptions {
        lenient: ra.lenient,
    };
    if parquet::is_export(dir) {
        let job = parquet::pick_job(dir, job)?;
        let pb = bar_of(
            parquet::job_bytes(dir, &job),
            ra.no_progress,
            "reading Parquet",
        );
        let agg = pool.install(|| {
            parquet::load(dir, &job, &opts, &|n| {
                if let Some(pb) = &pb {
                    pb.inc(n);
                }
            })
        });
        if let Some(pb) = pb {
            pb.finish_and_clear();
        }
        let agg = agg?;
        warn_diag(&agg);
        return Ok(agg);
    }
    if let Some(j) = job {
        return Err(Error::Other(format!(
            "--job {j}: {} is not a Parquet export (h5prov export --parquet)",
            dir.display()
        )));
    }
    let inputs = discover_read(dir, &opts)?;
    let pb = progress_bar(&inputs, ra);
    let agg = pool.install(|| {
        aggregate_all(&inputs, &opts, &|n| {
            if let Some(pb) = &pb {
                pb.inc(n);
            }
        })
    });
    if let Some(pb) = pb {
        pb.finish_and_clear();
    }
    let agg = agg?;
    warn_diag(&agg);
    Ok(agg)
}

/// [`discover_with`], warning once about the directories skipped (`--lenient`).
fn discover_read(dir: &Path, opts: &ReadOptions) -> Result<Inputs, Error> {
    let inputs = discover_with(dir, opts)?;
    if let Some((p, why)) = inputs.unreadable_dirs.first() {
        eprintln!(
            "warning: skipped {} director{} that cannot be read (--lenient), e.g. {}: {why}",
            inputs.unreadable_dirs.len(),
            if inputs.unreadable_dirs.len() == 1 {
                "y"
            } else {
                "ies"
            },
            p.display()
        );
    }
    Ok(inputs)
}

fn warn_diag(agg: &Aggregate) {
    let d = &agg.diag;
    if let Some((p, l)) = d.truncated.iter().next() {
        eprintln!(
            "warning: {} file(s) end with a truncated line (process killed while writing?), e.g. {p}:{l}; that line was skipped",
            d.truncated.len()
        );
    }
    if let Some((p, l, r)) = &d.first_malformed {
        eprintln!(
            "warning: skipped {} malformed row(s) in {} file(s) (--lenient); first at {p}:{l}: {r}",
            d.malformed_rows, d.malformed_files
        );
    }
}

/// Prints the report's warnings about inconsistent traces (unreadable meta files among
/// them), one line per kind.
fn warn_report(rep: &Report) {
    for w in &rep.warnings {
        eprintln!("warning: {}", w.message);
    }
}

fn write_file(path: &Path, bytes: &[u8], flag: &str) -> Result<(), Error> {
    std::fs::write(path, bytes).map_err(|e| Error::Other(format!("{flag} {}: {e}", path.display())))
}

fn stdout_write(s: &str) -> Result<(), Error> {
    stdout_with(|out| out.write_all(s.as_bytes()))
}

/// Runs `f` on a buffered stdout and flushes it; a closed pipe is not an error.
fn stdout_with(f: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) -> Result<(), Error> {
    let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    match f(&mut out).and_then(|_| out.flush()) {
        Ok(()) => Ok(()),
        // A closed pipe (`| head`) is not an error worth reporting.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(Error::Other(format!("writing to stdout: {e}"))),
    }
}

fn color_enabled(c: ColorChoice) -> bool {
    match c {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                && std::io::stdout().is_terminal()
        }
    }
}

fn report(a: ReportArgs) -> Result<(), Error> {
    let th = a.th.thresholds()?;
    let pool = pool(a.read.threads)?;
    let agg = load(&a.dir, a.job.as_deref(), &a.read, &pool)?;
    let rep: Report = analyze(agg, &th, &[a.dir.display().to_string()]);
    warn_report(&rep);
    if let Some(dir) = &a.csv {
        std::fs::create_dir_all(dir)
            .map_err(|e| Error::Other(format!("--csv {}: {e}", dir.display())))?;
        for (name, bytes) in render::csv_out::tables(&rep) {
            write_file(&dir.join(name), &bytes, "--csv")?;
        }
        eprintln!("wrote CSV tables to {}", dir.display());
    }
    if let Some(path) = &a.html {
        write_file(path, render::html::render(&rep, a.top).as_bytes(), "--html")?;
        eprintln!("wrote HTML report to {}", path.display());
    }
    let out = if a.json {
        stdout_with(|out| render::json_to(&rep, out))
    } else {
        let opt = TermOptions {
            color: color_enabled(a.color),
            top: a.top,
        };
        stdout_write(&render::terminal::render(&rep, &opt))
    };
    // The process ends here: freeing hundreds of thousands of dataset rows one by one is
    // time for nothing.
    std::mem::forget(rep);
    out
}

/// `h5prov export --parquet`: each job's traces as a new partition of every table.
fn export_parquet(a: &ExportArgs, out: &Path) -> Result<(), Error> {
    let pool = pool(a.read.threads)?;
    let opts = ReadOptions {
        lenient: a.read.lenient,
    };
    // Runs by job id; runs with one id are one job.
    let mut jobs: std::collections::BTreeMap<String, Inputs> = Default::default();
    for dir in &a.dirs {
        let inputs = discover_read(dir, &opts)?;
        let id = match &a.job {
            Some(j) => parquet::sanitize_job_id(j),
            None => parquet::job_id_of(dir, &inputs)?,
        };
        let all = jobs.entry(id).or_default();
        all.traces.extend(inputs.traces);
        all.objects.extend(inputs.objects);
        all.metas.extend(inputs.metas);
        all.streams.extend(inputs.streams);
    }
    // Refuse before writing anything.
    for id in jobs.keys() {
        if let Some(p) = parquet::partition_exists(out, id) {
            return Err(Error::Other(format!(
                "{}: job {id} was already exported to {}; nothing was written (an export adds \
                 jobs and rewrites nothing: remove job={id} from every table to export it \
                 again, or name this run's job differently with --job)",
                p.display(),
                out.display()
            )));
        }
    }
    std::fs::create_dir_all(out)
        .map_err(|e| Error::Other(format!("--parquet {}: {e}", out.display())))?;
    for (id, mut inputs) in jobs {
        inputs.traces.sort_by(|x, y| x.0.cmp(&y.0));
        inputs.objects.sort_by(|x, y| x.0.cmp(&y.0));
        inputs.metas.sort();
        inputs.streams.sort();
        let pb = bar(&inputs, a.read.no_progress, &format!("exporting job {id}"));
        let stats = pool.install(|| {
            parquet::export_job(out, &id, &inputs, &opts, &|n| {
                if let Some(pb) = &pb {
                    pb.inc(n);
                }
            })
        });
        if let Some(pb) = pb {
            pb.finish_and_clear();
        }
        let s = stats?;
        if let Some((p, l)) = s.truncated.first() {
            eprintln!(
                "warning: {} file(s) end with a truncated line (process killed while writing?), e.g. {p}:{l}; that line was skipped",
                s.truncated.len()
            );
        }
        if let Some((p, l, r)) = &s.first_malformed {
            eprintln!(
                "warning: skipped {} malformed row(s) (--lenient); first at {p}:{l}: {r}",
                s.malformed_rows
            );
        }
        for (p, why) in &s.bad_metas {
            eprintln!("warning: {p}: meta file not used: {why}");
        }
        eprintln!(
            "exported job {id}: {} records, {} object rows, {} processes from {} files ({} bytes) \
             into {} ({} bytes of Parquet)",
            s.records,
            s.objects,
            s.processes,
            s.files,
            s.bytes_in,
            out.display(),
            s.bytes_out
        );
    }
    Ok(())
}

fn export_cmd(a: ExportArgs) -> Result<(), Error> {
    if let Some(out) = &a.parquet {
        return export_parquet(&a, out);
    }
    if let Some(out) = &a.prov {
        use h5prov_analyzer::export::prov;
        let (graph, s) = prov::build(&a.dirs, a.job.as_deref())?;
        let write = || -> std::io::Result<()> {
            let mut w = std::io::BufWriter::new(std::fs::File::create(out)?);
            match a.prov_format {
                ProvFormat::Json => prov::json::write_json(&graph, &mut w)?,
                ProvFormat::Turtle => prov::turtle::write_turtle(&graph, &mut w)?,
            }
            w.into_inner().map_err(|e| e.into_error())?.sync_all()
        };
        write().map_err(|e| Error::Other(format!("--prov {}: {e}", out.display())))?;
        if s.files_without_identity > 0 {
            eprintln!(
                "warning: left out {} file row(s) without a file identity (dev, ino): \
                 traces written before h5prov recorded it, or a file name stat(2) could \
                 not find",
                s.files_without_identity
            );
        }
        if s.derivations_left_out > 0 {
            eprintln!(
                "warning: left out the inferred wasDerivedFrom of {} process(es) that read \
                 and wrote too many datasets (more than {} pairs each)",
                s.derivations_left_out,
                prov::MAX_DERIVATIONS_PER_PROCESS
            );
        }
        eprintln!(
            "wrote {} process(es), {} file version(s), {} dataset(s), {} relation(s) to {}",
            s.processes,
            s.file_versions,
            s.datasets,
            s.relations,
            out.display()
        );
        return Ok(());
    }
    let perfetto = a
        .perfetto
        .clone()
        .expect("clap requires --perfetto or --parquet");
    let [dir] = a.dirs.as_slice() else {
        return Err(Error::Other(
            "--perfetto exports one trace directory: give one".into(),
        ));
    };
    let pool = pool(a.read.threads)?;
    let inputs = discover_read(
        dir,
        &ReadOptions {
            lenient: a.read.lenient,
        },
    )?;
    if inputs.traces.is_empty() {
        return Err(Error::Other(format!(
            "{}: no trace files (*.trace.csv, *.trace.jsonl, *.trace.bin) to export",
            dir.display()
        )));
    }
    let f = std::fs::File::create(&perfetto)
        .map_err(|e| Error::Other(format!("--perfetto {}: {e}", perfetto.display())))?;
    let mut w = std::io::BufWriter::new(f);
    let opts = ReadOptions {
        lenient: a.read.lenient,
    };
    let stats = pool.install(|| perfetto::perfetto(&inputs, &opts, &mut w))?;
    w.flush()
        .map_err(|e| Error::Other(format!("--perfetto {}: {e}", perfetto.display())))?;
    if let Some(t) = stats.truncated.first() {
        eprintln!(
            "warning: {} file(s) end with a truncated line, e.g. {t}; that line was skipped",
            stats.truncated.len()
        );
    }
    if stats.malformed_rows > 0 {
        eprintln!(
            "warning: skipped {} malformed row(s) (--lenient)",
            stats.malformed_rows
        );
    }
    eprintln!(
        "wrote {} events for {} process(es), {} thread(s) to {} (open it in ui.perfetto.dev)",
        stats.events,
        stats.processes,
        stats.threads,
        perfetto.display()
    );
    Ok(())
}

fn compare_cmd(a: CompareArgs) -> Result<(), Error> {
    let pool = pool(a.read.threads)?;
    let th = Thresholds::default();
    let ra = load(&a.run_a, None, &a.read, &pool)?;
    let rb = load(&a.run_b, None, &a.read, &pool)?;
    let rep_a = analyze(ra, &th, &[a.run_a.display().to_string()]);
    let rep_b = analyze(rb, &th, &[a.run_b.display().to_string()]);
    warn_report(&rep_a);
    warn_report(&rep_b);
    let c = compare::compare(&rep_a, &rep_b);
    if a.json {
        stdout_write(&compare::render_json(&c))
    } else {
        stdout_write(&compare::render_terminal(&c, a.top))
    }
}

fn merge_cmd(a: MergeArgs) -> Result<(), Error> {
    if !merged::LEVELS.contains(&a.level) {
        return Err(Error::Other(format!(
            "--level {}: must be between {} and {}",
            a.level,
            merged::LEVELS.start(),
            merged::LEVELS.end()
        )));
    }
    let pool = pool(a.threads)?;
    let inputs = discover(&a.dir)?;
    let pb = bar(&inputs, a.no_progress, "merging");
    let stats = pool.install(|| {
        merged::merge(&a.dir, &inputs, &a.output, a.level, &|n| {
            if let Some(pb) = &pb {
                pb.inc(n);
            }
        })
    });
    if let Some(pb) = pb {
        pb.finish_and_clear();
    }
    let stats = stats?;
    eprintln!(
        "merged {} file(s), {} bytes, into {} ({} bytes, {:.1}x smaller)",
        stats.members,
        stats.bytes_in,
        a.output.display(),
        stats.bytes_out,
        stats.bytes_in as f64 / stats.bytes_out.max(1) as f64
    );
    Ok(())
}

/// `h5prov lineage`: the chains of one file or dataset, as text or JSON.
fn lineage_cmd(a: LineageArgs) -> Result<(), Error> {
    use h5prov_analyzer::export::prov::{self, lineage};
    let target = lineage::Target::parse(&a.target)?;
    let (graph, _) = prov::build(&a.inputs, None)?;
    let chains = lineage::lineage(&graph, &target)?;
    let text = if a.json {
        let mut v = serde_json::to_string_pretty(&chains)
            .map_err(|e| Error::Other(format!("lineage: {e}")))?;
        v.push('\n');
        v
    } else {
        lineage::to_text(&chains)
    };
    std::io::stdout()
        .write_all(text.as_bytes())
        .map_err(|e| Error::Other(format!("lineage: stdout: {e}")))
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // Only where it was measured to pay: a report of trace files (see `malloc`).
    if let Cmd::Report(a) = &cli.cmd {
        if !parquet::is_export(&a.dir) {
            malloc::tune();
        }
    }
    let r = match cli.cmd {
        Cmd::Run(a) => match run_cmd(a) {
            Ok(code) => return code,
            Err(e) => Err(e),
        },
        Cmd::Report(a) => report(a),
        Cmd::Export(a) => export_cmd(a),
        Cmd::Compare(a) => compare_cmd(a),
        Cmd::Merge(a) => merge_cmd(a),
        Cmd::Cat(a) => cat_cmd(a),
        Cmd::Lineage(a) => lineage_cmd(a),
        Cmd::Collect(a) => {
            h5prov_analyzer::live::collect::run(h5prov_analyzer::live::collect::Config {
                listen: &a.listen,
                metrics: &a.metrics,
                out: a.out.as_deref(),
                roll: a.roll_mib.max(1) << 20,
                unix_mode: a.unix_mode,
                token_file: a.token_file.as_deref(),
                tls: a.tls_cert.as_deref().zip(a.tls_key.as_deref()),
                limits: h5prov_analyzer::live::collect::Limits {
                    max_connections: a.max_connections,
                    max_series: a.max_series,
                    job_expiry: std::time::Duration::from_secs(a.job_expiry),
                    idle_timeout: std::time::Duration::from_secs(a.idle_timeout),
                },
            })
            .map_err(|e| Error::Other(format!("collect: {e}")))
        }
        Cmd::Top(a) => a
            .token_file
            .as_deref()
            .map(h5prov_format::auth::read_token_file)
            .transpose()
            .and_then(|token| {
                let tls = a
                    .tls_ca
                    .as_deref()
                    .map(h5prov_format::tls::client_config)
                    .transpose()?;
                Ok((token, tls))
            })
            .map_err(|e| Error::Other(format!("top: {e}")))
            .and_then(|(token, tls)| {
                h5prov_analyzer::live::top::run(
                    &a.collector,
                    std::time::Duration::from_millis(a.interval),
                    token,
                    tls,
                )
                .map_err(|e| Error::Other(format!("top: {e}")))
            }),
    };
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

//! What the benchmark runs: connector modes, workloads and their sizes.

use std::fmt;
use std::path::{Path, PathBuf};

/// h5prov's `level=` option.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// `level=summary`: per-object summaries only.
    Summary,
    /// `level=dataset`: one record per traced callback.
    Dataset,
    /// `level=element`: records plus selection detail.
    Element,
}

impl Level {
    /// The value given to `level=`.
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Summary => "summary",
            Level::Dataset => "dataset",
            Level::Element => "element",
        }
    }
}

/// h5prov's `format=` option.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Format {
    /// `format=csv`.
    Csv,
    /// `format=jsonl`.
    Jsonl,
    /// `format=bin`.
    Bin,
}

impl Format {
    /// The value given to `format=`.
    pub fn as_str(self) -> &'static str {
        match self {
            Format::Csv => "csv",
            Format::Jsonl => "jsonl",
            Format::Bin => "bin",
        }
    }
}

/// h5prov's `stream=` to a collector the benchmark starts (`h5prov collect`), and its
/// `stream_level=`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Stream {
    /// No `stream=`.
    Off,
    /// `stream_level=event`: every record as a message.
    Event,
    /// `stream_level=interval`: per-operation sums every `stream_interval` (1 s).
    Interval,
}

impl Stream {
    /// The value given to `stream_level=`, or `None` when not streaming.
    pub fn level(self) -> Option<&'static str> {
        match self {
            Stream::Off => None,
            Stream::Event => Some("event"),
            Stream::Interval => Some("interval"),
        }
    }
}

/// How HDF5 is run: which VOL connector stack sits above the native one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Mode {
    /// No connector variables at all: HDF5's native connector.
    Native,
    /// HDF5's built-in C `pass_through` connector over native.
    PassThrough,
    /// `libh5prov.so` from the plugin path over native.
    H5prov {
        /// Trace level.
        level: Level,
        /// Trace file format.
        format: Format,
        /// Streaming to the benchmark's collector.
        stream: Stream,
        /// The same options given to the baseline `libh5prov.so`
        /// (`--baseline-plugin-path`, e.g. an older build) instead of the measured one:
        /// named `baseline-<mode>`, run in the same interleaved rounds.
        baseline: bool,
    },
}

/// The prefix of a mode run with the baseline `libh5prov.so`.
pub const BASELINE_PREFIX: &str = "baseline-";

/// Environment variable that selects the VOL connector.
pub const VOL_VAR: &str = "HDF5_VOL_CONNECTOR";
/// Environment variable that lists plugin directories.
pub const PLUGIN_VAR: &str = "HDF5_PLUGIN_PATH";
/// Launcher variables the workloads read their rank/size from, in their order
/// of precedence; all but `PMI_*` are removed from a child's environment so the
/// rank the benchmark sets is the one used.
pub const RANK_VARS: &[&str] = &[
    "OMPI_COMM_WORLD_RANK",
    "PMI_RANK",
    "PMIX_RANK",
    "SLURM_PROCID",
    "MV2_COMM_WORLD_RANK",
    "OMPI_COMM_WORLD_SIZE",
    "PMI_SIZE",
    "SLURM_NTASKS",
    "MV2_COMM_WORLD_SIZE",
];

impl Mode {
    /// Every mode, in the default order of a round: the streaming ones at
    /// `level=dataset`, CSV, next to the same without streaming.
    pub fn all() -> Vec<Mode> {
        let mut v = vec![Mode::Native, Mode::PassThrough];
        for level in [Level::Summary, Level::Dataset, Level::Element] {
            for format in [Format::Csv, Format::Jsonl, Format::Bin] {
                v.push(Mode::h5prov(level, format));
                if (level, format) == (Level::Dataset, Format::Csv) {
                    for stream in [Stream::Event, Stream::Interval] {
                        v.push(Mode::H5prov {
                            level,
                            format,
                            stream,
                            baseline: false,
                        });
                    }
                }
            }
        }
        v
    }

    /// h5prov at `level`, writing `format`, not streaming.
    pub fn h5prov(level: Level, format: Format) -> Mode {
        Mode::H5prov {
            level,
            format,
            stream: Stream::Off,
            baseline: false,
        }
    }

    /// The same h5prov mode run with the baseline `libh5prov.so` (`None` for native and
    /// `pass_through`, which load no h5prov).
    pub fn as_baseline(&self) -> Option<Mode> {
        match *self {
            Mode::H5prov {
                level,
                format,
                stream,
                ..
            } => Some(Mode::H5prov {
                level,
                format,
                stream,
                baseline: true,
            }),
            _ => None,
        }
    }

    /// Whether the mode runs the baseline `libh5prov.so`.
    pub fn is_baseline(&self) -> bool {
        matches!(self, Mode::H5prov { baseline: true, .. })
    }

    /// Stable name used on the command line and in reports, e.g. `h5prov-dataset-csv`,
    /// `h5prov-dataset-csv-stream-interval`.
    pub fn name(&self) -> String {
        match self {
            Mode::Native => "native".into(),
            Mode::PassThrough => "pass_through".into(),
            Mode::H5prov {
                level,
                format,
                stream,
                baseline,
            } => {
                let mut n = format!(
                    "{}h5prov-{}-{}",
                    if *baseline { BASELINE_PREFIX } else { "" },
                    level.as_str(),
                    format.as_str()
                );
                if let Some(s) = stream.level() {
                    n.push_str("-stream-");
                    n.push_str(s);
                }
                n
            }
        }
    }

    /// The same mode without streaming (itself when it does not stream).
    pub fn without_stream(&self) -> Mode {
        match *self {
            Mode::H5prov {
                level,
                format,
                baseline,
                ..
            } => Mode::H5prov {
                level,
                format,
                stream: Stream::Off,
                baseline,
            },
            m => m,
        }
    }

    /// Whether the mode streams to a collector.
    pub fn streams(&self) -> bool {
        matches!(self, Mode::H5prov { stream, .. } if *stream != Stream::Off)
    }

    /// Parses a name produced by [`Mode::name`].
    pub fn parse(s: &str) -> Result<Mode, String> {
        if let Some(rest) = s.strip_prefix(BASELINE_PREFIX) {
            return Mode::parse(rest)?.as_baseline().ok_or_else(|| {
                format!("unknown mode '{s}': only h5prov modes have a {BASELINE_PREFIX} twin")
            });
        }
        Mode::all()
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| {
                let names: Vec<String> = Mode::all().iter().map(Mode::name).collect();
                format!(
                    "unknown mode '{s}'; known: {}, and {BASELINE_PREFIX}<h5prov mode>",
                    names.join(", ")
                )
            })
    }

    /// True for the modes that load `libh5prov.so`.
    pub fn is_h5prov(&self) -> bool {
        matches!(self, Mode::H5prov { .. })
    }

    /// Environment changes for a child: `(name, Some(value))` sets, `(name, None)` removes.
    /// A streaming mode streams to `collector` (`HOST:PORT`; the run's [`Settings`] has it).
    pub fn env(
        &self,
        plugin_path: &Path,
        trace_dir: &Path,
        collector: Option<&str>,
    ) -> Vec<(String, Option<String>)> {
        match self {
            Mode::Native => vec![(VOL_VAR.into(), None), (PLUGIN_VAR.into(), None)],
            Mode::PassThrough => vec![
                (
                    VOL_VAR.into(),
                    Some("pass_through under_vol=0;under_info={}".into()),
                ),
                (PLUGIN_VAR.into(), None),
            ],
            Mode::H5prov {
                level,
                format,
                stream,
                ..
            } => vec![
                (
                    VOL_VAR.into(),
                    Some(format!(
                        "h5prov under_vol=0;under_info={{}};path={};level={};format={}{}",
                        trace_dir.display(),
                        level.as_str(),
                        format.as_str(),
                        match (stream.level(), collector) {
                            (Some(l), Some(addr)) => format!(";stream={addr};stream_level={l}"),
                            _ => String::new(),
                        }
                    )),
                ),
                (PLUGIN_VAR.into(), Some(plugin_path.display().to_string())),
            ],
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

/// A benchmark kernel (one of the C programs in `workloads/`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Workload {
    /// `metadata_heavy`: small metadata operations, reports API calls.
    MetadataHeavy,
    /// `vpic_write`: VPIC-IO-like particle write, one file per process.
    VpicWrite,
    /// `bdcats_read`: BDCATS-IO-like balanced read of `vpic_write`'s files.
    BdcatsRead,
}

impl Workload {
    /// Every workload, in report order.
    pub fn all() -> Vec<Workload> {
        vec![
            Workload::MetadataHeavy,
            Workload::VpicWrite,
            Workload::BdcatsRead,
        ]
    }

    /// Name used on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Workload::MetadataHeavy => "metadata-heavy",
            Workload::VpicWrite => "vpic-write",
            Workload::BdcatsRead => "bdcats-read",
        }
    }

    /// The executable built by `workloads/build.sh`.
    pub fn program(self) -> &'static str {
        match self {
            Workload::MetadataHeavy => "metadata_heavy",
            Workload::VpicWrite => "vpic_write",
            Workload::BdcatsRead => "bdcats_read",
        }
    }

    /// Parses a name produced by [`Workload::name`].
    pub fn parse(s: &str) -> Result<Workload, String> {
        Workload::all()
            .into_iter()
            .find(|w| w.name() == s)
            .ok_or_else(|| {
                format!("unknown workload '{s}'; known: metadata-heavy, vpic-write, bdcats-read")
            })
    }
}

/// Problem sizes handed to the workloads.
#[derive(Clone, Copy, Debug, serde::Serialize)]
pub struct Sizes {
    /// `metadata_heavy -n`: loop iterations (15 API calls each).
    pub meta_iters: u64,
    /// `vpic_write -p`: particles per process (32 bytes each per timestep).
    pub vpic_particles: u64,
    /// `vpic_write -t`: timesteps.
    pub vpic_timesteps: u64,
}

impl Sizes {
    /// Sizes for a full run: about 0.3–1 s per kernel and process here (vpic: 256 MiB
    /// per process), so the whole default suite stays within a few minutes.
    pub const FULL: Sizes = Sizes {
        meta_iters: 5000,
        vpic_particles: 1 << 21,
        vpic_timesteps: 4,
    };
    /// Sizes for `--quick`: a smoke test, seconds in total.
    pub const QUICK: Sizes = Sizes {
        meta_iters: 300,
        vpic_particles: 16384,
        vpic_timesteps: 2,
    };
}

/// Everything a benchmark run needs.
#[derive(Clone, Debug)]
pub struct Settings {
    /// Repository root (holds `workloads/build.sh`).
    pub repo: PathBuf,
    /// Directory the workload executables are built into.
    pub bin_dir: PathBuf,
    /// Scratch directory for HDF5 files and traces (emptied per run).
    pub work_dir: PathBuf,
    /// Where `report.md` and `report.json` go.
    pub out_dir: PathBuf,
    /// `HDF5_PLUGIN_PATH` for the h5prov modes.
    pub plugin_path: PathBuf,
    /// `HDF5_PLUGIN_PATH` for the `baseline-` modes (`--baseline-plugin-path`): another
    /// `libh5prov.so`, e.g. an older build, measured in the same interleaved rounds.
    pub baseline_plugin_path: Option<PathBuf>,
    /// Modes to run, in round order.
    pub modes: Vec<Mode>,
    /// Workloads to run.
    pub workloads: Vec<Workload>,
    /// Process counts to run each workload with.
    pub procs: Vec<usize>,
    /// Interleaved rounds.
    pub rounds: usize,
    /// Problem sizes.
    pub sizes: Sizes,
    /// Whether this is a `--quick` run.
    pub quick: bool,
    /// Run the callgrind measurement of metadata-heavy.
    pub callgrind: bool,
    /// `metadata_heavy -n` for the two callgrind runs (the difference is measured).
    pub callgrind_iters: (u64, u64),
    /// MPI mode: the `-mpi` workloads (one shared file, MPI-IO) against the parallel HDF5,
    /// each process group started as `mpirun -np N`.
    pub mpi: bool,
    /// `--pin`: the CPU list every timed workload process runs on (`taskset -c LIST`).
    pub pin: Option<String>,
    /// `HOST:PORT` of the collector the streaming modes stream to (started by
    /// [`run`](crate::run) when a mode streams).
    pub collector: Option<String>,
}

impl Settings {
    /// The plugin directory `mode` loads `libh5prov.so` from: the baseline's for a
    /// `baseline-` mode (the measured one when no baseline is set; [`crate::filter_modes`]
    /// refuses baseline modes then).
    pub fn plugin_for(&self, mode: Mode) -> &Path {
        match &self.baseline_plugin_path {
            Some(b) if mode.is_baseline() => b,
            _ => &self.plugin_path,
        }
    }

    /// The executable of `w` in `bin_dir`: `vpic_write`, or `vpic_write-mpi` in MPI mode.
    pub fn program(&self, w: Workload) -> PathBuf {
        let suffix = if self.mpi { "-mpi" } else { "" };
        self.bin_dir.join(format!("{}{suffix}", w.program()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streaming_modes_parse_and_stream_to_the_collector() {
        let names: Vec<String> = Mode::all().iter().map(Mode::name).collect();
        for n in &names {
            assert_eq!(&Mode::parse(n).unwrap().name(), n, "names round-trip");
        }
        let m = Mode::parse("h5prov-dataset-csv-stream-interval").unwrap();
        assert!(m.streams());
        assert_eq!(m.without_stream().name(), "h5prov-dataset-csv");
        assert!(
            names.contains(&m.without_stream().name()),
            "its baseline runs too"
        );
        let vol = |m: Mode, c: Option<&str>| {
            m.env(Path::new("/p"), Path::new("/t"), c)
                .into_iter()
                .find(|(k, _)| k == VOL_VAR)
                .and_then(|(_, v)| v)
                .unwrap()
        };
        assert!(vol(m, Some("127.0.0.1:9"))
            .ends_with(";format=csv;stream=127.0.0.1:9;stream_level=interval"));
        let event = Mode::parse("h5prov-dataset-csv-stream-event").unwrap();
        assert!(vol(event, Some("h:1")).ends_with(";stream=h:1;stream_level=event"));
        let off = Mode::parse("h5prov-dataset-csv").unwrap();
        assert!(!off.streams());
        assert!(
            vol(off, Some("h:1")).ends_with(";format=csv"),
            "no stream when off"
        );
    }

    #[test]
    fn baseline_modes_load_the_baseline_plugin() {
        let b = Mode::parse("baseline-h5prov-dataset-bin").unwrap();
        assert!(b.is_baseline() && b.is_h5prov());
        assert_eq!(b.name(), "baseline-h5prov-dataset-bin");
        assert_eq!(
            Mode::h5prov(Level::Dataset, Format::Bin).as_baseline(),
            Some(b)
        );
        let s = Mode::parse("baseline-h5prov-dataset-csv-stream-event").unwrap();
        assert_eq!(
            s.without_stream(),
            Mode::parse("baseline-h5prov-dataset-csv").unwrap()
        );
        for bad in ["baseline-native", "baseline-pass_through", "baseline-x"] {
            assert!(Mode::parse(bad).is_err(), "{bad}");
        }
        let mut settings = Settings {
            repo: "/r".into(),
            bin_dir: "/b".into(),
            work_dir: "/w".into(),
            out_dir: "/o".into(),
            plugin_path: "/new".into(),
            baseline_plugin_path: Some("/old".into()),
            modes: vec![],
            workloads: vec![],
            procs: vec![1],
            rounds: 1,
            sizes: Sizes::QUICK,
            quick: true,
            callgrind: false,
            callgrind_iters: (1, 2),
            mpi: false,
            pin: None,
            collector: None,
        };
        let plugin = |m: Mode| {
            m.env(settings.plugin_for(m), Path::new("/t"), None)
                .into_iter()
                .find(|(k, _)| k == PLUGIN_VAR)
                .and_then(|(_, v)| v)
        };
        assert_eq!(plugin(b).as_deref(), Some("/old"));
        let new = Mode::h5prov(Level::Dataset, Format::Bin);
        assert_eq!(plugin(new).as_deref(), Some("/new"));
        settings.baseline_plugin_path = None;
        assert_eq!(settings.plugin_for(b), Path::new("/new"));
    }
}

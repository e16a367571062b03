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
    },
}

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
    /// Every mode, in the default order of a round.
    pub fn all() -> Vec<Mode> {
        let mut v = vec![Mode::Native, Mode::PassThrough];
        for level in [Level::Summary, Level::Dataset, Level::Element] {
            for format in [Format::Csv, Format::Jsonl, Format::Bin] {
                v.push(Mode::H5prov { level, format });
            }
        }
        v
    }

    /// Stable name used on the command line and in reports, e.g. `h5prov-dataset-csv`.
    pub fn name(&self) -> String {
        match self {
            Mode::Native => "native".into(),
            Mode::PassThrough => "pass_through".into(),
            Mode::H5prov { level, format } => {
                format!("h5prov-{}-{}", level.as_str(), format.as_str())
            }
        }
    }

    /// Parses a name produced by [`Mode::name`].
    pub fn parse(s: &str) -> Result<Mode, String> {
        Mode::all()
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| {
                let names: Vec<String> = Mode::all().iter().map(Mode::name).collect();
                format!("unknown mode '{s}'; known: {}", names.join(", "))
            })
    }

    /// True for the modes that load `libh5prov.so`.
    pub fn is_h5prov(&self) -> bool {
        matches!(self, Mode::H5prov { .. })
    }

    /// Environment changes for a child: `(name, Some(value))` sets, `(name, None)` removes.
    pub fn env(&self, plugin_path: &Path, trace_dir: &Path) -> Vec<(String, Option<String>)> {
        match self {
            Mode::Native => vec![(VOL_VAR.into(), None), (PLUGIN_VAR.into(), None)],
            Mode::PassThrough => vec![
                (
                    VOL_VAR.into(),
                    Some("pass_through under_vol=0;under_info={}".into()),
                ),
                (PLUGIN_VAR.into(), None),
            ],
            Mode::H5prov { level, format } => vec![
                (
                    VOL_VAR.into(),
                    Some(format!(
                        "h5prov under_vol=0;under_info={{}};path={};level={};format={}",
                        trace_dir.display(),
                        level.as_str(),
                        format.as_str()
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
}

impl Settings {
    /// The executable of `w` in `bin_dir`: `vpic_write`, or `vpic_write-mpi` in MPI mode.
    pub fn program(&self, w: Workload) -> PathBuf {
        let suffix = if self.mpi { "-mpi" } else { "" };
        self.bin_dir.join(format!("{}{suffix}", w.program()))
    }
}

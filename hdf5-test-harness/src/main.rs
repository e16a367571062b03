//! `hdf5-test-harness`: thin command-line front end; the work is in the library.
#![forbid(unsafe_code)]

use clap::{Parser, Subcommand};
use hdf5_test_harness::asyncvol::AsyncBuild;
use hdf5_test_harness::bootstrap::Bootstrap;
use hdf5_test_harness::buildtree::BuildTree;
use hdf5_test_harness::error::{Context, Error, Result};
use hdf5_test_harness::expected::ExpectedDifferences;
use hdf5_test_harness::mode::{self, Mode};
use hdf5_test_harness::paths::{self, Variant, VariantDirs};
use hdf5_test_harness::results::Suite;
use hdf5_test_harness::runner::{self, RunOptions};
use hdf5_test_harness::{h5version, shellenv};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

const ABOUT: &str = "Builds HDF5 1.14 (serial, parallel or thread-safe; or 2.2.0: --variant v2) \
with its test suites and runs \
HDF5's own regression suites natively, through HDF5's pass_through connector and through h5prov, \
reporting every difference.";

const LONG_ABOUT: &str =
    "Builds HDF5 1.14 with its test suites and runs HDF5's own regression suites \
natively, through HDF5's pass_through connector and through h5prov, reporting every difference.

Typical use on a fresh Debian 12 machine (as root):
  hdf5-test-harness build-hdf5                     # ~5 min once, cached afterwards
  hdf5-test-harness run --mode pass_through        # native baseline + pass_through, 3 suites
  eval \"$(hdf5-test-harness env)\"                   # HDF5_DIR, LD_LIBRARY_PATH, PATH for scripts

HDF5 2.2.0 (--variant v2): the library from crates.io, built with PyPI's CMake, and HDF5 1.14.5's
API tests (test/API) built against it; only the api suite runs:
  hdf5-test-harness build-hdf5 --variant v2
  hdf5-test-harness run --variant v2 --mode pass_through --mode h5prov

Thread-safe HDF5 1.14.5 (--variant threadsafe: HDF5_ENABLE_THREADSAFE, no high-level library;
api, vol and tools suites, results in target/harness-threadsafe):
  hdf5-test-harness build-hdf5 --variant threadsafe
  hdf5-test-harness run --variant threadsafe --mode native --mode pass_through --mode h5prov

Cache: $H5PROV_CACHE, else $XDG_CACHE_HOME/h5prov, else ~/.cache/h5prov.
Exit status: 0 success, 1 a test regressed (or a connector was not loaded), 2 error.";

#[derive(Parser)]
#[command(name = "hdf5-test-harness", version, about = ABOUT, long_about = LONG_ABOUT)]
struct Cli {
    /// Repository root (default: the checkout this binary was built from, else
    /// `git rev-parse --show-toplevel`). `.deps/`, `target/harness` and the
    /// expected-differences file are found from it.
    #[arg(long, global = true, value_name = "DIR")]
    repo: Option<PathBuf>,

    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Get HDF5 >= 1.14: validate $HDF5_DIR, or build 1.14.5 from Debian's source package
    /// (serial, parallel or thread-safe; --variant v2: HDF5 2.2.0 from crates.io).
    #[command(long_about = "Get HDF5 >= 1.14 and link it into <repo>/.deps.

If HDF5_DIR is set (e.g. by `module load hdf5`), checks that include/H5public.h says >= 1.14 and \
links .deps/hdf5 to it; fails if it is older.

Otherwise (Debian 12, as root): adds a deb-src entry for trixie in \
/etc/apt/sources.list.d/h5prov-trixie-src.sources, installs build-essential cmake dpkg-dev \
zlib1g-dev libclang-dev (plus libopenmpi-dev openmpi-bin for --variant parallel), downloads \
hdf5=1.14.5+repack-3 with `apt-get source --download-only`, extracts it without Debian's patches, \
configures it with tests (API, pass-through VOL, tools), builds with all cores and installs into \
<cache>/hdf5-1.14.5-<variant>/{src,build,install}. The build tree is kept: `run` needs it.

Idempotent: a stamp file records the configure options; when it matches, only the links \
.deps/hdf5 and .deps/hdf5-build (parallel: .deps/hdf5-parallel[-build], threadsafe: \
.deps/hdf5-threadsafe[-build]) are refreshed. Prints the time of every step.

--variant threadsafe builds 1.14.5 with -DHDF5_ENABLE_THREADSAFE=ON and without the high-level \
library (HDF5 1.14 supports thread-safety only without HL, C++ and Fortran) into \
<cache>/hdf5-1.14.5-threadsafe, from the source package another 1.14.5 variant already \
downloaded when there is one; its test/ (with ttsafe), test/API and tools tests are built.

--variant v2 builds HDF5 2.2.0 into <cache>/hdf5-2.2.0-serial/{src,build,install} and links \
.deps/hdf5-2 and .deps/hdf5-2-build: installs build-essential zlib1g-dev patch python3-venv when \
missing; fetches the crates.io crate hdf5-metno-src 0.10.4 (which vendors the HDF5 2.2.0 library \
source, without test/ or tools/) with `cargo vendor` on a throwaway manifest in download/; uses \
PyPI's cmake (>= 3.26, in the venv cmake-venv/) when the system's is older; configures the shared \
C and HL libraries with zlib, no tests, tools, Fortran, C++ or Java; then builds HDF5 1.14.5's \
API tests (test/API from the serial variant's Debian source package, fetched if missing) against \
it in api-test/, patched as hdf5-test-harness/patches/api-test-1.14.5-on-hdf5-2.patch explains. \
HDF5_DIR counts only when it holds HDF5 >= 2.0.")]
    BuildHdf5 {
        /// serial, parallel (OpenMPI, CC=mpicc, HDF5_ENABLE_PARALLEL=ON), threadsafe
        /// (HDF5_ENABLE_THREADSAFE=ON, no high-level library), or v2 (HDF5 2.2.0, serial,
        /// with 1.14.5's API tests).
        #[arg(
            long,
            default_value = "serial",
            value_name = "serial|parallel|threadsafe|v2"
        )]
        variant: Variant,
        /// Build jobs (default: all cores).
        #[arg(long, short = 'j')]
        jobs: Option<usize>,
    },

    /// Build Argobots 1.2 and HDF5's async I/O connector vol-async 1.8.1 (with its serial
    /// tests) against the thread-safe HDF5, from the release sources in ../shared/vendor.
    #[command(
        long_about = "Build Argobots 1.2 and vol-async 1.8.1 from the unmodified release \
tarballs in <repo>/../shared/vendor (or $H5PROV_VENDOR_DIR) against the thread-safe HDF5 1.14.5 \
(build-hdf5 --variant threadsafe first; a thread-safe $HDF5_DIR counts), into \
<cache>/argobots-1.2 and <cache>/vol-async-1.8.1-threadsafe-exec-time, and link .deps/argobots and \
.deps/vol-async to them.

vol-async's plugin directory is <cache>/vol-async-1.8.1-threadsafe-exec-time/plugin (only libh5async.so in \
it); its serial tests are in tests/. Needs autoconf, automake and libtool (Argobots' autogen.sh). \
Cached: a stamp written after the last step records the sources, the HDF5 and the Argobots built \
against; an interrupted or stale build is redone."
    )]
    BuildAsync {
        /// Build jobs (default: all cores).
        #[arg(long, short = 'j')]
        jobs: Option<usize>,
    },

    /// Print `export` lines (HDF5_DIR, LD_LIBRARY_PATH, PATH) for `eval "$(hdf5-test-harness env)"`.
    #[command(
        long_about = "Print shell `export` lines for HDF5_DIR, LD_LIBRARY_PATH (with <install>/lib) \
and PATH (with <install>/bin), for `eval \"$(hdf5-test-harness env)\"`.

Uses $HDF5_DIR when set (after checking it is >= 1.14), else the variant's installation in the \
cache (run build-hdf5 first). Directories already present are not added again."
    )]
    Env {
        /// Which cached installation when HDF5_DIR is unset (v2: HDF5 2.2.0; HDF5_DIR counts
        /// for v2 only when it holds HDF5 >= 2.0, for threadsafe only when it is thread-safe).
        #[arg(
            long,
            default_value = "serial",
            value_name = "serial|parallel|threadsafe|v2"
        )]
        variant: Variant,
    },

    /// Run HDF5's regression suites per connector mode and diff each against native.
    #[command(long_about = RUN_LONG_ABOUT)]
    Run {
        /// A mode: a preset name (see above) or 'label=<connector string>'. Repeatable.
        /// Default: pass_through. native always runs (or is reused) as the baseline.
        #[arg(long = "mode", short = 'm', value_name = "MODE")]
        modes: Vec<String>,
        /// A suite: api, vol, tools or testpar (parallel builds only). Repeatable.
        /// Default: api, vol and tools (also with --variant threadsafe); with --variant
        /// parallel, testpar; with --variant v2, api (the only one HDF5 2.x has sources for).
        #[arg(long = "suite", short = 's', value_name = "api|vol|tools|testpar")]
        suites: Vec<Suite>,
        /// HDF5_PLUGIN_PATH for modes other than native [default: <repo>/.deps/plugins (also
        /// for threadsafe and v2: one libh5prov.so serves them all); with --variant parallel,
        /// <repo>/.deps/plugins-parallel].
        #[arg(long, value_name = "DIR")]
        plugin_path: Option<PathBuf>,
        /// Where results (<mode>/<suite>.json), logs and work folders go [default:
        /// <repo>/target/harness; with --variant v2, <repo>/target/harness-v2; with
        /// --variant threadsafe, <repo>/target/harness-threadsafe].
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
        /// Parallel jobs for the vol and tools suites (default: all cores).
        #[arg(long, short = 'j')]
        jobs: Option<usize>,
        /// HDF5 build tree [default: <repo>/.deps/hdf5-build, else the variant's cached build].
        #[arg(long, value_name = "DIR")]
        build_dir: Option<PathBuf>,
        /// Which build: serial (.deps/hdf5-build), parallel (.deps/hdf5-parallel-build,
        /// plugins from .deps/plugins-parallel, default suite testpar), threadsafe
        /// (.deps/hdf5-threadsafe-build, results in target/harness-threadsafe) or v2 (HDF5
        /// 2.2.0, .deps/hdf5-2-build, suite api only, results in target/harness-v2).
        #[arg(
            long,
            default_value = "serial",
            value_name = "serial|parallel|threadsafe|v2"
        )]
        variant: Variant,
        /// Expected-differences file [default: <repo>/hdf5-test-harness/expected-differences.txt].
        #[arg(long, value_name = "FILE")]
        expected: Option<PathBuf>,
        /// Run native again even if saved results for the same build exist.
        #[arg(long)]
        rerun_native: bool,
        /// testpar: run every parallel test (over 15 min natively on 2 cores) instead of
        /// the CI subset.
        #[arg(long)]
        testpar_full: bool,
        /// List at most this many tests per kind of difference.
        #[arg(long, default_value_t = 100)]
        max_listed: usize,
        /// Keep the traces h5prov writes while the suites run (by default they are counted
        /// into the results and removed: six modes write about 20 GB).
        #[arg(long)]
        keep_traces: bool,
    },

    /// MPI workloads under mpirun through h5prov; check the analyzer names the slowed rank.
    #[command(long_about = MPI_RUN_LONG_ABOUT)]
    MpiRun {
        /// MPI ranks (more than the cores: OpenMPI oversubscribes).
        #[arg(long, default_value_t = 4)]
        np: usize,
        /// The rank that writes FACTOR times the particles.
        #[arg(long, default_value_t = 3)]
        slow_rank: usize,
        /// How many times the others' particles the slowed rank writes.
        #[arg(long, default_value_t = 10)]
        factor: u64,
        /// Particles per rank (4 bytes x 8 variables each per timestep).
        #[arg(long, default_value_t = 262_144)]
        particles: u64,
        /// Timesteps (one group each).
        #[arg(long, default_value_t = 2)]
        timesteps: u64,
        /// Transfer mode of the kernels: ind or coll. Repeatable. Default: ind and coll.
        #[arg(long = "xfer", value_name = "ind|coll")]
        xfers: Vec<String>,
        /// Transfer modes in which the slowed rank must be named the straggler of
        /// dataset.write (others are reported only). Repeatable. Default: ind.
        #[arg(long = "require", value_name = "ind|coll")]
        require: Vec<String>,
        /// Also fail when the report's write counts by requested transfer mode
        /// (transfers.by_mode) do not match the kernel's -x flag.
        #[arg(long)]
        check_transfers: bool,
        /// VPIC runs per transfer mode; the slowed rank must be named in a majority of them.
        #[arg(long, default_value_t = 3)]
        attempts: usize,
        /// Directory with the parallel build of libh5prov.so [default: <repo>/.deps/plugins-parallel].
        #[arg(long, value_name = "DIR")]
        plugin_path: Option<PathBuf>,
        /// The analyzer binary [default: <repo>/target/release/h5prov].
        #[arg(long, value_name = "FILE")]
        analyzer: Option<PathBuf>,
        /// Work directory (workloads, data, traces, JSON reports) [default: <repo>/target/mpi-run].
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
    },

    /// Recompute and print the differences between saved native results and a mode.
    #[command(
        long_about = "Recompute the differences between the saved native results and mode M \
(from <out>/native/<suite>.json and <out>/M/<suite>.json), applying the current \
expected-differences file. Exits 1 if a test that did not fail natively fails in M."
    )]
    Diff {
        /// The mode's label (a preset name, or the label of a 'label=...' mode).
        #[arg(long, short = 'm', value_name = "MODE")]
        mode: String,
        /// Results directory [default: <repo>/target/harness].
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
        /// Restrict to these suites (default: all saved ones).
        #[arg(long = "suite", short = 's', value_name = "api|vol|tools|testpar")]
        suites: Vec<Suite>,
        /// Expected-differences file [default: <repo>/hdf5-test-harness/expected-differences.txt].
        #[arg(long, value_name = "FILE")]
        expected: Option<PathBuf>,
        /// List at most this many tests per kind of difference.
        #[arg(long, default_value_t = 100)]
        max_listed: usize,
    },
}

const MPI_RUN_LONG_ABOUT: &str = "Run the MPI workloads under `mpirun -np N` through h5prov \
and check the analyzer's verdict on real multi-rank traces.

Steps: build workloads/ with `workloads/build.sh --mpi <out>/bin` against the parallel HDF5 \
(.deps/hdf5-parallel, or $HDF5_DIR when it is parallel); then for each transfer mode (--xfer, \
default ind and coll): run vpic_write-mpi (one shared file, one group per timestep, each rank \
writes its hyperslab of the 8 particle arrays; rank --slow-rank writes --factor times the \
particles: `-s RANK:FACTOR`) with HDF5_VOL_CONNECTOR='h5prov under_vol=0;under_info={};\
path=<out>/traces-vpic-<xfer>;level=dataset', require one trace file per rank, run \
`h5prov report --json` on them and read `straggler_ranks` (the entry whose op is \
dataset.write, its `outliers[].rank`); then bdcats_read-mpi on the same file, again one trace \
file per rank. Prints the per-rank dataset.write totals, the ranks named, the \
independent/collective counts of the report.

Exit status: 0 when the slowed rank is named a straggler of dataset.write in a majority of the \
runs of every --require mode (default: ind and coll), by its time or by its data volume (in \
collective mode the other ranks wait for the slowed one inside the collective call, so only its \
bytes single it out; in independent mode a page cache can hide its time), 1 when not, 2 on errors.";

const RUN_LONG_ABOUT: &str = "Run HDF5's own regression suites from the HDF5 build tree for each connector \
mode, then diff every mode against the native baseline.

Modes (--mode, repeatable):
  native          HDF5_VOL_CONNECTOR unset (always run first, or reused from --out for the same build)
  pass_through    'pass_through under_vol=0;under_info={}'
  h5prov          'h5prov under_vol=0;under_info={}'
  h5prov-over-pt  'h5prov under_vol=1;under_info={under_vol=0;under_info={}}'
  pt-over-h5prov  'pass_through under_vol=416;under_info={under_vol=0;under_info={}}'
  LABEL=STRING    any connector string, e.g.
                  'traced=h5prov under_vol=0;under_info={};level=element;path=/tmp/x'

Suites (--suite, repeatable):
  api    h5_api_test for each area (test/API); per-test outcomes parsed from its output
  vol    the test/ programs of HDF5's pass-through-VOL ctest list, each run with the mode's
         HDF5_VOL_CONNECTOR in a private copy of test/vol_native (parallel with --jobs)
  tools  the ctest tests under tools/ (h5dump, h5ls, h5diff, h5repack, h5copy, h5stat, h5import,
         h5jam, misc, ...) with HDF5_VOL_CONNECTOR in their environment; modes run one after
         another because these tests write into the build tree
  testpar  parallel builds only (--variant parallel): HDF5's testpar/ programs and the
         parallel API tests (h5_api_test_parallel <area>), each with its ctest command
         `mpiexec -n 4 --oversubscribe ...`, one after another, in a private copy of
         <build>/testpar. OpenMPI may run as root and oversubscribe (OMPI_ALLOW_RUN_AS_ROOT*,
         OMPI_MCA_rmaps_base_oversubscribe, unless set). By default a CI subset (listed in
         hdf5-test-harness/src/testpar.rs: testphdf5's separately listed sub-tests, t_mpi,
         t_pflush1/2, t_pread, t_pshutdown, t_prestart, t_init_term, t_select_io_dset,
         t_shapesame, t_vfd, the 8 parallel API areas; ~25 s per mode); --testpar-full
         adds the slow ones (testphdf5's ~70 default sub-tests, t_bigio, t_cache,
         t_filters_parallel, t_pmulti_dset, t_2Gio, t_subfiling_vfd). ctest's WILL_FAIL
         (t_pflush1) is honoured; h5_api_test_parallel must name the mode's connector

Before a mode's suites, a small C probe (hdf5-test-harness/c/vol_probe.c) runs with the mode's \
environment and must report the connector named by the first word of the connector string for \
the default FAPL and for a file it creates; otherwise the mode fails (HDF5 may fall back to native).

Output: one line '[mode] suite: N passed, M failed, K skipped' per suite, then a summary with \
lines 'mode/suite: N passed, M failed, K skipped', times, and the tests whose outcome differs \
from native. Exit status 1 when a test that does not fail natively fails through a connector, \
unless listed in hdf5-test-harness/expected-differences.txt.";

fn default_jobs() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get())
}

fn env_var(k: &str) -> Option<String> {
    std::env::var(k).ok().filter(|v| !v.is_empty())
}

/// `HDF5_DIR` from the environment, unless it is the repository's own `.deps` link, which
/// `.cargo/config.toml` exports to every `cargo run` (that is not a user's choice, and on a
/// fresh clone the link does not exist yet).
fn user_hdf5_dir(repo: &Path) -> Option<PathBuf> {
    let dir = PathBuf::from(env_var("HDF5_DIR")?);
    // Compare paths as written: the link's target may well be what the user chose. Both
    // variants' links count: cargo exports the serial `.deps/hdf5` even to
    // `build-hdf5 --variant parallel`, and that is not a parallel HDF5 the user picked.
    let own = Variant::ALL.map(|v| Path::new(".deps").join(v.link_names().0));
    if own.iter().any(|o| dir == repo.join(o) || dir.ends_with(o)) {
        None
    } else {
        Some(dir)
    }
}

/// `p` made absolute against the current directory (programs run in directories below it).
fn absolute(p: PathBuf) -> Result<PathBuf> {
    std::path::absolute(&p).context(|| format!("making {} absolute", p.display()))
}

/// [`user_hdf5_dir`] for `variant`: a serial `HDF5_DIR` does not count for the parallel
/// variant, nor one that is not thread-safe for threadsafe, nor an HDF5 1.x one for v2
/// (scripts export the serial 1.14.5 installation for everything else), with a note.
fn user_hdf5_dir_for(repo: &Path, variant: Variant) -> Option<PathBuf> {
    let dir = user_hdf5_dir(repo)?;
    if variant == Variant::Parallel && !hdf5_test_harness::bootstrap::is_parallel_install(&dir) {
        eprintln!(
            "hdf5-test-harness: note: HDF5_DIR={} is not a parallel HDF5; using the parallel variant's own build instead",
            dir.display()
        );
        return None;
    }
    if variant == Variant::Threadsafe && !hdf5_test_harness::bootstrap::is_threadsafe_install(&dir)
    {
        eprintln!(
            "hdf5-test-harness: note: HDF5_DIR={} is not a thread-safe HDF5; using the threadsafe variant's own build instead",
            dir.display()
        );
        return None;
    }
    if variant.is_v2() && h5version::read_installation(&dir).is_ok_and(|v| v.major < 2) {
        eprintln!(
            "hdf5-test-harness: note: HDF5_DIR={} is not HDF5 2.x; using the v2 variant's own build instead",
            dir.display()
        );
        return None;
    }
    Some(dir)
}

fn load_expected(repo: &Path, path: Option<PathBuf>) -> Result<ExpectedDifferences> {
    let path = path.unwrap_or_else(|| repo.join("hdf5-test-harness/expected-differences.txt"));
    let text = std::fs::read_to_string(&path)
        .context(|| format!("reading expected differences {}", path.display()))?;
    ExpectedDifferences::parse(&text, &path.display().to_string())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match real_main(cli) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("hdf5-test-harness: error: {e}");
            ExitCode::from(2)
        }
    }
}

fn real_main(cli: Cli) -> Result<bool> {
    let repo = match cli.repo {
        Some(r) => r,
        None => paths::repo_root()?,
    };
    match cli.command {
        Command::BuildHdf5 { variant, jobs } => {
            Bootstrap {
                hdf5_dir: user_hdf5_dir_for(&repo, variant),
                variant,
                cache_root: paths::cache_root(env_var)?,
                repo_root: repo,
                jobs: jobs.unwrap_or_else(default_jobs),
            }
            .run()?;
            Ok(true)
        }
        Command::BuildAsync { jobs } => {
            let cache_root = paths::cache_root(env_var)?;
            let hdf5 = match user_hdf5_dir_for(&repo, Variant::Threadsafe) {
                Some(d) => d,
                None => VariantDirs::new(&cache_root, Variant::Threadsafe).install,
            };
            let vendor_dir = match env_var("H5PROV_VENDOR_DIR") {
                Some(d) => PathBuf::from(d),
                None => repo.join("../shared/vendor"),
            };
            AsyncBuild {
                cache_root,
                repo_root: repo,
                vendor_dir,
                hdf5,
                jobs: jobs.unwrap_or_else(default_jobs),
            }
            .run()?;
            Ok(true)
        }
        Command::Env { variant } => {
            let install = match user_hdf5_dir_for(&repo, variant) {
                Some(d) => d,
                None => VariantDirs::new(&paths::cache_root(env_var)?, variant).install,
            };
            let version = h5version::read_installation(&install).map_err(|e| {
                Error::new(format!(
                    "{e}\nRun `hdf5-test-harness build-hdf5` first (or set HDF5_DIR)."
                ))
            })?;
            if version < h5version::MINIMUM {
                return Err(Error::new(format!(
                    "HDF5 at {} is {version}; h5prov needs >= {}",
                    install.display(),
                    h5version::MINIMUM
                )));
            }
            // Under `cargo run`, LD_LIBRARY_PATH also holds cargo's own additions (the target
            // directory and the toolchain's libraries): leave those out of the exports.
            let ld = std::env::var("LD_LIBRARY_PATH").ok().map(|v| {
                let exe_dir = std::env::current_exe()
                    .ok()
                    .and_then(|e| e.parent().map(Path::to_path_buf));
                let under_cargo = std::env::var_os("CARGO").is_some();
                v.split(':')
                    .filter(|e| {
                        !(under_cargo
                            && (e.contains("/.rustup/toolchains/")
                                || exe_dir
                                    .as_ref()
                                    .is_some_and(|d| Path::new(e).starts_with(d))))
                    })
                    .collect::<Vec<_>>()
                    .join(":")
            });
            let vars = shellenv::exports(
                &install,
                &shellenv::lib_dir(&install),
                ld.as_deref(),
                std::env::var("PATH").ok().as_deref(),
            );
            print!("{}", shellenv::render(&vars));
            Ok(true)
        }
        Command::Run {
            modes,
            suites,
            plugin_path,
            out,
            jobs,
            build_dir,
            variant,
            expected,
            rerun_native,
            max_listed,
            testpar_full,
            keep_traces,
        } => {
            let modes: Vec<Mode> = if modes.is_empty() {
                vec![Mode::parse("pass_through")?]
            } else {
                modes
                    .iter()
                    .map(|m| Mode::parse(m))
                    .collect::<Result<_>>()?
            };
            let mut seen = std::collections::HashSet::new();
            for m in &modes {
                if !seen.insert(m.label.clone()) {
                    return Err(Error::new(format!(
                        "mode label '{}' given twice (presets: {})",
                        m.label,
                        mode::preset_names()
                    )));
                }
            }
            let suites = match (suites.is_empty(), variant) {
                (true, Variant::Parallel) => vec![Suite::Testpar],
                (true, Variant::Serial | Variant::Threadsafe) => Suite::ALL.to_vec(),
                (true, Variant::V2) => vec![Suite::Api],
                (false, _) => suites,
            };
            if variant.is_v2() {
                if let Some(why) = suites
                    .iter()
                    .find_map(|&s| hdf5_test_harness::hdf5v2::missing_suite_reason(s))
                {
                    return Err(Error::new(why));
                }
            }
            let build_dir = match build_dir {
                Some(d) => d,
                None => {
                    let link = repo.join(".deps").join(variant.link_names().1);
                    if link.exists() {
                        link
                    } else {
                        VariantDirs::new(&paths::cache_root(env_var)?, variant).build
                    }
                }
            };
            let build = BuildTree::open(&build_dir)?;
            if variant == Variant::Threadsafe && !build.threadsafe {
                return Err(Error::new(format!(
                    "--variant threadsafe: the build tree {} is not thread-safe (HDF5_ENABLE_THREADSAFE \
                     is not ON in its CMakeCache.txt); build one with `hdf5-test-harness build-hdf5 \
                     --variant threadsafe`, or drop --build-dir",
                    build.dir.display()
                )));
            }
            let opts = RunOptions {
                modes,
                suites,
                // Absolute, like `out`: the tests run in other directories.
                plugin_path: absolute(
                    plugin_path.unwrap_or_else(|| repo.join(variant.default_plugin_dir())),
                )?,
                // Absolute: the probe and the tests run in directories below it.
                out: absolute(out.unwrap_or_else(|| repo.join(variant.default_results_dir())))?,
                jobs: jobs.unwrap_or_else(default_jobs).max(1),
                build,
                expected: load_expected(&repo, expected)?,
                rerun_native,
                max_listed,
                testpar_full,
                keep_traces,
            };
            runner::run(&opts)
        }
        Command::MpiRun {
            np,
            slow_rank,
            factor,
            particles,
            timesteps,
            xfers,
            require,
            check_transfers,
            attempts,
            plugin_path,
            analyzer,
            out,
        } => {
            let check = |v: &[String]| -> Result<()> {
                match v.iter().find(|x| !matches!(x.as_str(), "ind" | "coll")) {
                    Some(bad) => Err(Error::new(format!(
                        "unknown transfer mode {bad:?} (expected ind or coll)"
                    ))),
                    None => Ok(()),
                }
            };
            check(&xfers)?;
            check(&require)?;
            let hdf5_dir = user_hdf5_dir_for(&repo, Variant::Parallel)
                .unwrap_or_else(|| repo.join(".deps/hdf5-parallel"));
            hdf5_test_harness::mpirun::run(&hdf5_test_harness::mpirun::MpiRunOptions {
                hdf5_dir,
                plugin_path: plugin_path.unwrap_or_else(|| repo.join(".deps/plugins-parallel")),
                analyzer: analyzer.unwrap_or_else(|| repo.join("target/release/h5prov")),
                out: absolute(out.unwrap_or_else(|| repo.join("target/mpi-run")))?,
                np,
                slow_rank,
                factor,
                particles,
                timesteps,
                xfers: if xfers.is_empty() {
                    vec!["ind".into(), "coll".into()]
                } else {
                    xfers
                },
                require: if require.is_empty() {
                    vec!["ind".into(), "coll".into()]
                } else {
                    require
                },
                check_transfers,
                attempts: attempts.max(1),
                repo,
            })
        }
        Command::Diff {
            mode,
            out,
            suites,
            expected,
            max_listed,
        } => {
            let label = match Mode::parse(&mode) {
                Ok(m) => m.label,
                Err(_) => mode,
            };
            let suites = if suites.is_empty() {
                Suite::EVERY.to_vec()
            } else {
                suites
            };
            let out = out.unwrap_or_else(|| repo.join("target/harness"));
            runner::diff_saved(
                &out,
                &label,
                &suites,
                &load_expected(&repo, expected)?,
                max_listed,
            )
        }
    }
}

//! `build-hdf5`: obtains HDF5 1.14 (an existing `HDF5_DIR`, or Debian's source package built
//! into the cache) and links it into `<repo>/.deps`. With `--variant v2`: HDF5 2.2.0 from
//! crates.io, built with PyPI's CMake, and HDF5 1.14.5's API tests built against it (see
//! [`crate::hdf5v2`]).

use crate::buildtree::cmake_cache_value;
use crate::error::{Context, Error, Result};
use crate::h5version::{self, MINIMUM};
use crate::hdf5v2;
use crate::paths::{
    self, Variant, VariantDirs, APT_SOURCES_PATH, APT_SOURCES_TEXT, DEBIAN_SOURCE_VERSION,
};
use crate::process::{command_line, find_program, fresh_dir, run_step, tail};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// Settings of one bootstrap.
#[derive(Debug, Clone)]
pub struct Bootstrap {
    /// serial, parallel, threadsafe or v2.
    pub variant: Variant,
    /// The cache root (see [`paths::cache_root`]).
    pub cache_root: PathBuf,
    /// The repository, for the `.deps` links.
    pub repo_root: PathBuf,
    /// Parallel build jobs.
    pub jobs: usize,
    /// `HDF5_DIR` from the environment, if set and non-empty.
    pub hdf5_dir: Option<PathBuf>,
}

#[derive(Default)]
struct Timer {
    steps: Vec<(String, f64)>,
    /// Put before step names (the v2 bootstrap fetching the 1.14.5 source for its tests).
    prefix: String,
}

impl Timer {
    fn record(&mut self, step: &str, secs: f64) {
        let step = format!("{}{step}", self.prefix);
        println!("[build-hdf5] {step}: {secs:.1} s");
        self.steps.push((step, secs));
    }

    /// `total T s (step s, step s, ...)`.
    fn summary(&self) -> String {
        let total: f64 = self.steps.iter().map(|(_, s)| s).sum();
        let parts: Vec<String> = self
            .steps
            .iter()
            .map(|(n, s)| format!("{n} {s:.1} s"))
            .collect();
        format!("total {total:.1} s ({})", parts.join(", "))
    }
}

/// The version of the `cmake` at `program` (`cmake --version`), if it runs.
fn cmake_version(program: &Path) -> Option<(u32, u32, u32)> {
    let out = Command::new(program).arg("--version").output().ok()?;
    if !out.status.success() {
        return None;
    }
    hdf5v2::parse_cmake_version(&String::from_utf8_lossy(&out.stdout))
}

/// Copies the regular files (not subdirectories) of `from` into `to`.
fn copy_files(from: &Path, to: &Path) -> Result<usize> {
    let mut n = 0;
    for entry in std::fs::read_dir(from).context(|| format!("reading {}", from.display()))? {
        let entry = entry.context(|| format!("reading {}", from.display()))?;
        let p = entry.path();
        if p.is_file() {
            std::fs::copy(&p, to.join(entry.file_name()))
                .context(|| format!("copying {} into {}", p.display(), to.display()))?;
            n += 1;
        }
    }
    Ok(n)
}

/// Replaces the symlink `link` with one pointing at `target`. Refuses to replace anything
/// that is not a symlink.
pub fn set_link(link: &Path, target: &Path) -> Result<()> {
    if let Some(dir) = link.parent() {
        std::fs::create_dir_all(dir).context(|| format!("creating {}", dir.display()))?;
    }
    match std::fs::symlink_metadata(link) {
        Ok(m) if m.file_type().is_symlink() => {
            std::fs::remove_file(link).context(|| format!("replacing link {}", link.display()))?
        }
        Ok(_) => {
            return Err(Error::new(format!(
                "{} exists and is not a symlink; move it away so build-hdf5 can link it to {}",
                link.display(),
                target.display()
            )))
        }
        Err(_) => {}
    }
    std::os::unix::fs::symlink(target, link)
        .context(|| format!("linking {} -> {}", link.display(), target.display()))
}

/// True when the C header `text` has a line `#define NAME 1` (also `# define`, as
/// `H5pubconf.h` writes `H5_HAVE_THREADSAFE` inside an `#if`). Commented-out lines
/// (`/* #undef NAME */`) do not count.
pub fn header_defines_one(text: &str, name: &str) -> bool {
    text.lines().any(|l| {
        let Some(rest) = l.trim_start().strip_prefix('#') else {
            return false;
        };
        let Some(rest) = rest.trim_start().strip_prefix("define") else {
            return false;
        };
        let mut words = rest.split_whitespace();
        rest.starts_with(char::is_whitespace)
            && words.next() == Some(name)
            && words.next() == Some("1")
            && words.next().is_none()
    })
}

/// True when the `H5pubconf.h` of the HDF5 installation `dir` defines `name` to 1; false
/// when unreadable.
fn install_defines(dir: &Path, name: &str) -> bool {
    std::fs::read_to_string(dir.join("include/H5pubconf.h"))
        .is_ok_and(|text| header_defines_one(&text, name))
}

/// True when the HDF5 installation `dir` was built with MPI (`H5_HAVE_PARALLEL` in its
/// `include/H5pubconf.h`); false when unreadable.
pub fn is_parallel_install(dir: &Path) -> bool {
    install_defines(dir, "H5_HAVE_PARALLEL")
}

/// True when the HDF5 installation `dir` is thread-safe (`H5_HAVE_THREADSAFE` in its
/// `include/H5pubconf.h`); false when unreadable.
pub fn is_threadsafe_install(dir: &Path) -> bool {
    install_defines(dir, "H5_HAVE_THREADSAFE")
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

fn apt_env(cmd: &mut Command) -> &mut Command {
    cmd.env("DEBIAN_FRONTEND", "noninteractive")
}

/// Interprets an apt failure: unreachable registry, or something else.
fn apt_error(step: &str, err: Error, log: &Path) -> Error {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let network = [
        "Temporary failure resolving",
        "Could not resolve",
        "Unable to connect",
        "Could not connect",
        "Failed to fetch",
        "Connection timed out",
        "Network is unreachable",
    ];
    if network.iter().any(|n| text.contains(n)) {
        Error::new(format!(
            "step '{step}': the Debian package registry (deb.debian.org) is unreachable from this machine; \
             check network/proxy settings (apt honours http_proxy and /etc/apt/apt.conf.d).\nLog: {}\n{}",
            log.display(),
            tail(log, 15)
        ))
    } else {
        err
    }
}

impl Bootstrap {
    /// Runs the bootstrap.
    pub fn run(&self) -> Result<()> {
        if let Some(dir) = &self.hdf5_dir {
            return self.use_existing(dir);
        }
        if self.variant.is_v2() {
            return self.run_v2();
        }
        let dirs = VariantDirs::new(&self.cache_root, self.variant);
        let stamp = paths::stamp_contents(self.variant, &dirs);
        let complete = std::fs::read_to_string(&dirs.stamp).ok();
        let installed = dirs.install.join("include/H5public.h").is_file()
            && dirs.build.join("bin/h5_api_test").is_file();
        if complete.as_deref() == Some(stamp.as_str()) && installed {
            println!(
                "[build-hdf5] HDF5 {} ({}) is up to date in {} (stamp {} matches)",
                paths::HDF5_VERSION,
                self.variant,
                dirs.root.display(),
                dirs.stamp.display()
            );
            return self.link(&dirs);
        }
        let mut timer = Timer::default();
        println!(
            "[build-hdf5] building HDF5 {} ({}) in {}",
            paths::HDF5_VERSION,
            self.variant,
            dirs.root.display()
        );
        self.install_packages(&dirs, &mut timer)?;
        if !dirs.src.join("CMakeLists.txt").is_file() {
            self.fetch_source(&dirs, &mut timer)?;
        } else {
            println!(
                "[build-hdf5] reusing the extracted source in {}",
                dirs.src.display()
            );
        }
        if complete.is_some() && complete.as_deref() != Some(stamp.as_str()) {
            println!("[build-hdf5] configure options changed since the last build: removing the old build and install trees");
            for d in [&dirs.build, &dirs.install] {
                if d.exists() {
                    std::fs::remove_dir_all(d).context(|| format!("removing {}", d.display()))?;
                }
            }
        }
        let _ = std::fs::remove_file(&dirs.stamp);
        self.configure_build_install(Path::new("cmake"), &dirs, &mut timer)?;

        let version = h5version::read_installation(&dirs.install)?;
        if version < MINIMUM {
            return Err(Error::new(format!(
                "step 'verify': built HDF5 reports version {version}, below {MINIMUM}"
            )));
        }
        std::fs::write(&dirs.stamp, &stamp)
            .context(|| format!("writing {}", dirs.stamp.display()))?;
        self.link(&dirs)?;
        println!(
            "[build-hdf5] done: HDF5 {version} in {}; {}",
            dirs.install.display(),
            timer.summary()
        );
        Ok(())
    }

    /// Configures `dirs.build` from `dirs.src` with [`paths::configure_args`], builds with
    /// `self.jobs` jobs and installs into `dirs.install`, each step timed.
    fn configure_build_install(
        &self,
        cmake: &Path,
        dirs: &VariantDirs,
        timer: &mut Timer,
    ) -> Result<()> {
        std::fs::create_dir_all(&dirs.build)
            .context(|| format!("creating {}", dirs.build.display()))?;

        let mut cmd = Command::new(cmake);
        cmd.args(paths::configure_args(self.variant, dirs))
            .current_dir(&dirs.build);
        for (k, v) in paths::configure_env(self.variant) {
            cmd.env(k, v);
        }
        timer.record(
            "configure",
            run_step(
                "configure (cmake)",
                &mut cmd,
                &dirs.logs.join("configure.log"),
            )?,
        );

        let mut cmd = Command::new(cmake);
        cmd.arg("--build")
            .arg(&dirs.build)
            .arg("-j")
            .arg(self.jobs.to_string());
        println!(
            "[build-hdf5] building with {} jobs (log: {})",
            self.jobs,
            dirs.logs.join("build.log").display()
        );
        timer.record(
            "build",
            run_step(
                "build (cmake --build)",
                &mut cmd,
                &dirs.logs.join("build.log"),
            )?,
        );

        let mut cmd = Command::new(cmake);
        cmd.arg("--install").arg(&dirs.build);
        timer.record(
            "install",
            run_step(
                "install (cmake --install)",
                &mut cmd,
                &dirs.logs.join("install.log"),
            )?,
        );
        Ok(())
    }

    /// Uses the installation in `HDF5_DIR` (HPC `module load hdf5`).
    fn use_existing(&self, dir: &Path) -> Result<()> {
        let version = h5version::read_installation(dir)
            .map_err(|e| Error::new(format!("HDF5_DIR={} is not usable: {e}", dir.display())))?;
        if version < MINIMUM {
            return Err(Error::new(format!(
                "HDF5_DIR={} holds HDF5 {version}; h5prov needs HDF5 >= {MINIMUM} (VOL connector API). \
                 Load a newer module, or unset HDF5_DIR to build HDF5 {} from Debian's source package.",
                dir.display(),
                paths::HDF5_VERSION
            )));
        }
        if self.variant.is_v2() && version.major < 2 {
            return Err(Error::new(format!(
                "HDF5_DIR={} holds HDF5 {version}; --variant v2 needs HDF5 >= 2.0. Unset HDF5_DIR \
                 to build HDF5 {} into the cache.",
                dir.display(),
                paths::HDF5_2_VERSION
            )));
        }
        if self.variant == Variant::Parallel {
            let conf = dir.join("include/H5pubconf.h");
            let text =
                std::fs::read_to_string(&conf).context(|| format!("reading {}", conf.display()))?;
            if !text
                .lines()
                .any(|l| l.trim_start().starts_with("#define H5_HAVE_PARALLEL 1"))
            {
                return Err(Error::new(format!(
                    "HDF5_DIR={} is a serial HDF5 ({} has no H5_HAVE_PARALLEL); --variant parallel needs a parallel build",
                    dir.display(),
                    conf.display()
                )));
            }
        }
        if self.variant == Variant::Threadsafe && !is_threadsafe_install(dir) {
            return Err(Error::new(format!(
                "HDF5_DIR={} is not a thread-safe HDF5 ({} does not define H5_HAVE_THREADSAFE); \
                 --variant threadsafe needs one built with --enable-threadsafe / HDF5_ENABLE_THREADSAFE=ON",
                dir.display(),
                dir.join("include/H5pubconf.h").display()
            )));
        }
        let (install_link, build_link) = self.variant.link_names();
        let deps = self.repo_root.join(".deps");
        set_link(&deps.join(install_link), dir)?;
        println!(
            "[build-hdf5] using HDF5 {version} from HDF5_DIR={} (linked {})",
            dir.display(),
            deps.join(install_link).display()
        );
        if !deps.join(build_link).exists() {
            println!(
                "[build-hdf5] note: HDF5's regression suites need a build tree, which an installation does not have; \
                 to run `hdf5-test-harness run`, build one with `env -u HDF5_DIR hdf5-test-harness build-hdf5{}`",
                match self.variant {
                    Variant::Serial => String::new(),
                    v => format!(" --variant {v}"),
                }
            );
        }
        Ok(())
    }

    fn link(&self, dirs: &VariantDirs) -> Result<()> {
        let (install_link, build_link) = self.variant.link_names();
        let deps = self.repo_root.join(".deps");
        set_link(&deps.join(install_link), &dirs.install)?;
        set_link(&deps.join(build_link), &dirs.build)?;
        println!(
            "[build-hdf5] linked {} -> {} and {} -> {}",
            deps.join(install_link).display(),
            dirs.install.display(),
            deps.join(build_link).display(),
            dirs.build.display()
        );
        Ok(())
    }

    fn install_packages(&self, dirs: &VariantDirs, timer: &mut Timer) -> Result<()> {
        let step = "install build dependencies";
        if find_program("apt-get").is_none() || find_program("dpkg-query").is_none() {
            return Err(Error::new(format!(
                "step '{step}': apt-get/dpkg-query not found. This bootstrap needs Debian 12 (or another apt system with \
                 trixie sources reachable). Alternatively set HDF5_DIR to an HDF5 >= {MINIMUM} installation."
            )));
        }
        let wanted = paths::required_packages(self.variant);
        let out = Command::new("dpkg-query")
            .args(["-W", "-f=${Package} ${db:Status-Status}\\n"])
            .args(&wanted)
            .output()
            .context(|| format!("step '{step}': running dpkg-query"))?;
        let text = String::from_utf8_lossy(&out.stdout);
        let missing: Vec<&str> = wanted
            .iter()
            .copied()
            .filter(|p| !text.lines().any(|l| l == format!("{p} installed")))
            .collect();
        let sources_current =
            std::fs::read_to_string(APT_SOURCES_PATH).ok().as_deref() == Some(APT_SOURCES_TEXT);
        // The v2 source comes from crates.io, not from apt; a 1.14.5 variant whose source
        // package another variant already downloaded needs no apt either.
        let need_source = !self.variant.is_v2()
            && !dirs.src.join("CMakeLists.txt").is_file()
            && self.downloaded_dsc(dirs).is_none();
        if missing.is_empty() && (sources_current || !need_source) {
            println!(
                "[build-hdf5] build dependencies already installed: {}",
                wanted.join(" ")
            );
            return Ok(());
        }
        if !is_root() {
            return Err(Error::new(format!(
                "step '{step}': needs root (apt-get). Missing packages: [{}]{}. Run as root, or install them and \
                 create {APT_SOURCES_PATH} yourself.",
                missing.join(" "),
                if sources_current || self.variant.is_v2() {
                    ""
                } else {
                    "; apt source entry not present"
                }
            )));
        }
        if !sources_current && !self.variant.is_v2() {
            std::fs::write(APT_SOURCES_PATH, APT_SOURCES_TEXT)
                .context(|| format!("step 'add apt deb-src entry': writing {APT_SOURCES_PATH}"))?;
            println!("[build-hdf5] wrote {APT_SOURCES_PATH} (deb-src for trixie)");
        }
        let log = dirs.logs.join("apt-update.log");
        let mut cmd = Command::new("apt-get");
        apt_env(&mut cmd).arg("update");
        let secs = run_step("apt-get update", &mut cmd, &log)
            .map_err(|e| apt_error("apt-get update", e, &log))?;
        // apt-get update exits 0 when some indexes fail; only the trixie sources matter here.
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        let trixie_failed = text.lines().any(|l| {
            l.contains("trixie")
                && (l.contains("Failed to fetch")
                    || l.contains("Temporary failure")
                    || l.contains("Could not"))
        });
        if trixie_failed {
            return Err(apt_error(
                "apt-get update",
                Error::new(format!(
                    "step 'apt-get update': could not fetch the trixie sources; see {}",
                    log.display()
                )),
                &log,
            ));
        }
        timer.record("apt-get update", secs);
        if !missing.is_empty() {
            let log = dirs.logs.join("apt-install.log");
            let mut cmd = Command::new("apt-get");
            apt_env(&mut cmd).args(["install", "-y"]).args(&missing);
            println!("[build-hdf5] installing {}", missing.join(" "));
            let secs = run_step(step, &mut cmd, &log).map_err(|e| apt_error(step, e, &log))?;
            timer.record("apt-get install", secs);
        }
        Ok(())
    }

    /// The Debian source package's `.dsc` when it is downloaded already: in this variant's
    /// `download/`, else in another 1.14.5 variant's (serial, parallel, thread-safe: one
    /// source package serves them all; `dpkg-source` finds the tarballs next to the `.dsc`).
    fn downloaded_dsc(&self, dirs: &VariantDirs) -> Option<PathBuf> {
        let dsc_name = format!("hdf5_{DEBIAN_SOURCE_VERSION}.dsc");
        std::iter::once(dirs.download.clone())
            .chain(
                Variant::ALL
                    .into_iter()
                    .filter(|v| v.is_debian_source() && *v != self.variant)
                    .map(|v| VariantDirs::new(&self.cache_root, v).download),
            )
            .map(|d| d.join(&dsc_name))
            .find(|dsc| dsc.is_file())
    }

    fn fetch_source(&self, dirs: &VariantDirs, timer: &mut Timer) -> Result<()> {
        let step = "download HDF5 source package";
        std::fs::create_dir_all(&dirs.download)
            .context(|| format!("creating {}", dirs.download.display()))?;
        let dsc_name = format!("hdf5_{DEBIAN_SOURCE_VERSION}.dsc");
        let dsc = match self.downloaded_dsc(dirs) {
            Some(d) => {
                if d.parent() != Some(dirs.download.as_path()) {
                    println!(
                        "[build-hdf5] reusing the downloaded source package {}",
                        d.display()
                    );
                }
                d
            }
            None => dirs.download.join(&dsc_name),
        };
        if !dsc.is_file() {
            let log = dirs.logs.join("apt-source.log");
            let mut cmd = Command::new("apt-get");
            apt_env(&mut cmd)
                .args(["source", "--download-only"])
                .arg(format!("hdf5={DEBIAN_SOURCE_VERSION}"))
                .current_dir(&dirs.download);
            let secs = run_step(step, &mut cmd, &log).map_err(|e| {
                let text = std::fs::read_to_string(&log).unwrap_or_default();
                if text.contains("Unable to find a source package") || text.contains("Can not find version") {
                    Error::new(format!(
                        "step '{step}': apt has no source package hdf5={DEBIAN_SOURCE_VERSION}. Either the trixie deb-src \
                         index is missing (check {APT_SOURCES_PATH} and `apt-get update`) or trixie moved to a newer \
                         hdf5 (see `apt-cache showsrc hdf5`; update DEBIAN_SOURCE_VERSION in hdf5-test-harness/src/paths.rs).\nLog: {}",
                        log.display()
                    ))
                } else {
                    apt_error(step, e, &log)
                }
            })?;
            timer.record("download source", secs);
        }
        if !dsc.is_file() {
            return Err(Error::new(format!(
                "step '{step}': apt-get source did not produce {}",
                dsc.display()
            )));
        }
        let tmp = dirs.root.join("src.partial");
        if tmp.exists() {
            std::fs::remove_dir_all(&tmp).context(|| format!("removing {}", tmp.display()))?;
        }
        let mut cmd = Command::new("dpkg-source");
        cmd.args(["--skip-patches", "-x"])
            .arg(&dsc)
            .arg(&tmp)
            .current_dir(&dirs.download);
        let secs = run_step(
            "extract source (dpkg-source)",
            &mut cmd,
            &dirs.logs.join("extract.log"),
        )?;
        std::fs::rename(&tmp, &dirs.src)
            .context(|| format!("renaming {} to {}", tmp.display(), dirs.src.display()))?;
        // dpkg-source leaves a copy of the orig tarball next to the target directory; the
        // download directory already has it.
        let dsc_dir = dsc.parent().unwrap_or(&dirs.download).to_path_buf();
        if let Ok(entries) = std::fs::read_dir(&dirs.root) {
            for e in entries.flatten() {
                let name = e.file_name();
                if name.to_string_lossy().contains(".orig.tar.") && dsc_dir.join(&name).is_file() {
                    let _ = std::fs::remove_file(e.path());
                }
            }
        }
        timer.record("extract source", secs);
        Ok(())
    }
}

/// The HDF5 2.x variant (`--variant v2`), see [`crate::hdf5v2`].
impl Bootstrap {
    /// Builds HDF5 2.2.0 and the API tests against it, unless both stamps match.
    fn run_v2(&self) -> Result<()> {
        let dirs = VariantDirs::new(&self.cache_root, Variant::V2);
        let stamp = paths::stamp_contents(Variant::V2, &dirs);
        let complete = std::fs::read_to_string(&dirs.stamp).ok();
        let library_ok = complete.as_deref() == Some(stamp.as_str())
            && dirs.install.join("include/H5public.h").is_file()
            && dirs.build.join("bin/libhdf5.so").exists();
        let api_stamp_path = dirs.api_test.join(hdf5v2::API_TEST_STAMP_NAME);
        let api_ok = library_ok
            && self.c_compiler(&dirs).is_ok_and(|cc| {
                std::fs::read_to_string(&api_stamp_path).ok()
                    == Some(hdf5v2::api_test_stamp(&stamp, &cc))
            })
            && dirs.api_test.join("bin/h5_api_test").is_file()
            && dirs.api_test.join("CTestTestfile.cmake").is_file();
        if library_ok && api_ok {
            println!(
                "[build-hdf5] HDF5 {} (v2) and the 1.14.5 API tests built against it are up to date in {} (stamps match): cached, nothing to build",
                paths::HDF5_2_VERSION,
                dirs.root.display()
            );
            return self.link(&dirs);
        }
        let mut timer = Timer::default();
        println!(
            "[build-hdf5] building HDF5 {} (v2: {} {} from crates.io) in {}",
            paths::HDF5_2_VERSION,
            hdf5v2::SOURCE_CRATE,
            hdf5v2::SOURCE_CRATE_VERSION,
            dirs.root.display()
        );
        self.install_packages(&dirs, &mut timer)?;
        if !library_ok {
            let have_source = dirs.src.join("CMakeLists.txt").is_file()
                && std::fs::read_to_string(dirs.src.join("src/H5public.h"))
                    .ok()
                    .and_then(|t| h5version::parse_h5public(&t, "H5public.h").ok())
                    .is_some_and(|v| v.to_string() == paths::HDF5_2_VERSION);
            if have_source {
                println!(
                    "[build-hdf5] reusing the extracted source in {}",
                    dirs.src.display()
                );
            } else {
                self.fetch_source_v2(&dirs, &mut timer)?;
            }
            let cmake = self.cmake_v2(&dirs, &mut timer)?;
            if complete.is_some() && complete.as_deref() != Some(stamp.as_str()) {
                println!("[build-hdf5] configure options changed since the last build: removing the old build and install trees");
            }
            for d in [&dirs.build, &dirs.install, &dirs.api_test] {
                if d.exists() {
                    std::fs::remove_dir_all(d).context(|| format!("removing {}", d.display()))?;
                }
            }
            let _ = std::fs::remove_file(&dirs.stamp);
            self.configure_build_install(&cmake, &dirs, &mut timer)?;
            let version = h5version::read_installation(&dirs.install)?;
            if version.to_string() != paths::HDF5_2_VERSION {
                return Err(Error::new(format!(
                    "step 'verify': the installed HDF5 reports version {version}, expected {}",
                    paths::HDF5_2_VERSION
                )));
            }
            std::fs::write(&dirs.stamp, &stamp)
                .context(|| format!("writing {}", dirs.stamp.display()))?;
        }
        self.build_api_test(&dirs, &stamp, &mut timer)?;
        self.link(&dirs)?;
        println!(
            "[build-hdf5] done: HDF5 {} in {}, h5_api_test in {}; {}",
            paths::HDF5_2_VERSION,
            dirs.install.display(),
            dirs.api_test.join("bin").display(),
            timer.summary()
        );
        Ok(())
    }

    /// `CMAKE_C_COMPILER` of the variant's configured build tree.
    fn c_compiler(&self, dirs: &VariantDirs) -> Result<String> {
        let cache = dirs.build.join("CMakeCache.txt");
        let text =
            std::fs::read_to_string(&cache).context(|| format!("reading {}", cache.display()))?;
        cmake_cache_value(&text, "CMAKE_C_COMPILER")
            .map(str::to_string)
            .ok_or_else(|| Error::new(format!("{}: no CMAKE_C_COMPILER", cache.display())))
    }

    /// Fetches the source crate with `cargo vendor` and moves its HDF5 tree to `dirs.src`.
    fn fetch_source_v2(&self, dirs: &VariantDirs, timer: &mut Timer) -> Result<()> {
        let step = "download HDF5 2.2.0 source (cargo vendor)";
        std::fs::create_dir_all(&dirs.download)
            .context(|| format!("creating {}", dirs.download.display()))?;
        let manifest = dirs.download.join("Cargo.toml");
        std::fs::write(&manifest, hdf5v2::fetch_manifest())
            .context(|| format!("writing {}", manifest.display()))?;
        let lib = dirs.download.join("lib.rs");
        std::fs::write(&lib, "").context(|| format!("writing {}", lib.display()))?;
        // `cargo run` tells its children which cargo it is; otherwise the one on PATH.
        let cargo = std::env::var_os("CARGO")
            .map(PathBuf::from)
            .filter(|p| p.is_file())
            .or_else(|| find_program("cargo"))
            .ok_or_else(|| {
                Error::new(format!(
                    "step '{step}': cargo not found on PATH; it fetches the HDF5 2.2.0 source ({} {}) from crates.io",
                    hdf5v2::SOURCE_CRATE,
                    hdf5v2::SOURCE_CRATE_VERSION
                ))
            })?;
        let vendor = dirs.download.join("vendor");
        if vendor.exists() {
            std::fs::remove_dir_all(&vendor)
                .context(|| format!("removing {}", vendor.display()))?;
        }
        let log = dirs.logs.join("cargo-vendor.log");
        let mut cmd = Command::new(&cargo);
        cmd.args(["vendor", "--versioned-dirs", "--manifest-path"])
            .arg(&manifest)
            .arg(&vendor)
            .current_dir(&dirs.download);
        let secs = run_step(step, &mut cmd, &log).map_err(|e| {
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            if [
                "failed to download",
                "Couldn't resolve",
                "failed to query",
                "network",
            ]
            .iter()
            .any(|n| text.contains(n))
            {
                Error::new(format!(
                    "step '{step}': crates.io is unreachable from this machine (cargo honours \
                     http_proxy/https_proxy and ~/.cargo/config.toml).\nLog: {}\n{}",
                    log.display(),
                    tail(&log, 15)
                ))
            } else {
                e
            }
        })?;
        let from = vendor
            .join(hdf5v2::vendored_crate_dir())
            .join(hdf5v2::SOURCE_CRATE_SUBDIR);
        let header = from.join("src/H5public.h");
        let text = std::fs::read_to_string(&header).context(|| {
            format!(
                "step '{step}': the vendored crate has no {} (is {} {} still the crate that vendors HDF5 2.2.0?)",
                header.display(),
                hdf5v2::SOURCE_CRATE,
                hdf5v2::SOURCE_CRATE_VERSION
            )
        })?;
        let version = h5version::parse_h5public(&text, &header.display().to_string())?;
        if version.to_string() != paths::HDF5_2_VERSION {
            return Err(Error::new(format!(
                "step '{step}': {} says HDF5 {version}, expected {}",
                header.display(),
                paths::HDF5_2_VERSION
            )));
        }
        if dirs.src.exists() {
            std::fs::remove_dir_all(&dirs.src)
                .context(|| format!("removing {}", dirs.src.display()))?;
        }
        std::fs::rename(&from, &dirs.src)
            .context(|| format!("moving {} to {}", from.display(), dirs.src.display()))?;
        std::fs::remove_dir_all(&vendor).context(|| format!("removing {}", vendor.display()))?;
        println!(
            "[build-hdf5] HDF5 {version} source ({}/{} of {} {}) in {}",
            hdf5v2::vendored_crate_dir(),
            hdf5v2::SOURCE_CRATE_SUBDIR,
            hdf5v2::SOURCE_CRATE,
            hdf5v2::SOURCE_CRATE_VERSION,
            dirs.src.display()
        );
        timer.record("download source (cargo vendor)", secs);
        Ok(())
    }

    /// A CMake new enough for HDF5 2.x: the system's if it is, else PyPI's in a venv in the
    /// cache (created on first use).
    fn cmake_v2(&self, dirs: &VariantDirs, timer: &mut Timer) -> Result<PathBuf> {
        let (maj, min) = hdf5v2::CMAKE_MINIMUM;
        let mut seen = Vec::new();
        let venv_cmake = dirs.cmake_venv.join("bin/cmake");
        for candidate in find_program("cmake")
            .into_iter()
            .chain([venv_cmake.clone()])
        {
            match cmake_version(&candidate) {
                Some(v) if hdf5v2::cmake_new_enough(v) => {
                    println!(
                        "[build-hdf5] using CMake {}.{}.{} ({})",
                        v.0,
                        v.1,
                        v.2,
                        candidate.display()
                    );
                    return Ok(candidate);
                }
                Some(v) => seen.push(format!(
                    "{} is {}.{}.{}",
                    candidate.display(),
                    v.0,
                    v.1,
                    v.2
                )),
                None => {}
            }
        }
        let step = "install CMake from PyPI into a venv";
        println!(
            "[build-hdf5] HDF5 2.x needs CMake >= {maj}.{min} ({}): installing PyPI's '{}' into {}",
            if seen.is_empty() {
                "none on PATH".to_string()
            } else {
                seen.join(", ")
            },
            hdf5v2::CMAKE_PIP_REQUIREMENT,
            dirs.cmake_venv.display()
        );
        let python = find_program("python3").ok_or_else(|| {
            Error::new(format!(
                "step '{step}': python3 not found on PATH (apt-get install python3-venv)"
            ))
        })?;
        if dirs.cmake_venv.exists() {
            std::fs::remove_dir_all(&dirs.cmake_venv)
                .context(|| format!("removing {}", dirs.cmake_venv.display()))?;
        }
        let log = dirs.logs.join("cmake-venv.log");
        let mut cmd = Command::new(&python);
        cmd.args(["-m", "venv"]).arg(&dirs.cmake_venv);
        let mut secs = run_step("create the venv (python3 -m venv)", &mut cmd, &log).map_err(|e| {
            if std::fs::read_to_string(&log).is_ok_and(|t| t.contains("ensurepip")) {
                Error::new(format!(
                    "step '{step}': `python3 -m venv` needs Debian's python3-venv package (apt-get install python3-venv).\n{e}"
                ))
            } else {
                e
            }
        })?;
        let log = dirs.logs.join("pip-cmake.log");
        let mut cmd = Command::new(dirs.cmake_venv.join("bin/python3"));
        cmd.args([
            "-m",
            "pip",
            "install",
            "--disable-pip-version-check",
            "--no-input",
            hdf5v2::CMAKE_PIP_REQUIREMENT,
        ]);
        secs += run_step("pip install cmake", &mut cmd, &log).map_err(|e| {
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            if ["NewConnectionError", "Max retries exceeded", "Temporary failure in name resolution"]
                .iter()
                .any(|n| text.contains(n))
            {
                Error::new(format!(
                    "step '{step}': PyPI is unreachable from this machine (pip honours https_proxy and PIP_INDEX_URL).\n{e}"
                ))
            } else {
                e
            }
        })?;
        match cmake_version(&venv_cmake) {
            Some(v) if hdf5v2::cmake_new_enough(v) => {
                println!(
                    "[build-hdf5] using CMake {}.{}.{} ({})",
                    v.0,
                    v.1,
                    v.2,
                    venv_cmake.display()
                );
                timer.record("cmake from PyPI (venv + pip)", secs);
                Ok(venv_cmake)
            }
            other => Err(Error::new(format!(
                "step '{step}': {} reports version {other:?} after `pip install '{}'` (log: {})",
                venv_cmake.display(),
                hdf5v2::CMAKE_PIP_REQUIREMENT,
                log.display()
            ))),
        }
    }

    /// The HDF5 1.14.5 source tree whose `test/API` is built against 2.2.0: the serial
    /// variant's, fetched from Debian's source package when it is not there yet.
    fn api_test_source(&self, timer: &mut Timer) -> Result<PathBuf> {
        let serial = VariantDirs::new(&self.cache_root, Variant::Serial);
        if serial.src.join("test/API/H5_api_test.c").is_file() {
            return Ok(serial.src);
        }
        println!(
            "[build-hdf5] HDF5 1.14.5's API tests come from Debian's hdf5 source package: fetching it into {} \
             (shared with the serial variant)",
            serial.src.display()
        );
        let b = Bootstrap {
            variant: Variant::Serial,
            ..self.clone()
        };
        timer.prefix = format!("{} test/API: ", paths::HDF5_VERSION);
        let fetched = b.install_packages(&serial, timer).and_then(|()| {
            if serial.src.join("CMakeLists.txt").is_file() {
                Ok(())
            } else {
                b.fetch_source(&serial, timer)
            }
        });
        timer.prefix.clear();
        fetched?;
        if !serial.src.join("test/API/H5_api_test.c").is_file() {
            return Err(Error::new(format!(
                "{} has no test/API/H5_api_test.c",
                serial.src.display()
            )));
        }
        Ok(serial.src)
    }

    /// Copies 1.14.5's `test/API` (and `test/h5test.h`) into `dirs.api_test/src`, applies
    /// [`hdf5v2::API_TEST_PATCH`], compiles `bin/h5_api_test` against the 2.2.0 build tree,
    /// and writes the `CTestTestfile.cmake` that lists its areas.
    fn build_api_test(
        &self,
        dirs: &VariantDirs,
        library_stamp: &str,
        timer: &mut Timer,
    ) -> Result<()> {
        let step = "build h5_api_test (HDF5 1.14.5 test/API against 2.2.0)";
        let v114 = self.api_test_source(timer)?;
        let start = Instant::now();
        let cc = self.c_compiler(dirs)?;
        let api = &dirs.api_test;
        fresh_dir(api)?;
        let src = api.join("src");
        let bin = api.join("bin");
        for d in [&src, &bin] {
            std::fs::create_dir_all(d).context(|| format!("creating {}", d.display()))?;
        }
        let test_dir = v114.join("test");
        copy_files(&test_dir.join("API"), &src)?;
        for h in hdf5v2::API_TEST_EXTRA_HEADERS {
            std::fs::copy(test_dir.join(h), src.join(h)).context(|| {
                format!(
                    "copying {} into {}",
                    test_dir.join(h).display(),
                    src.display()
                )
            })?;
        }
        let patch_file = api.join(hdf5v2::API_TEST_PATCH_NAME);
        std::fs::write(&patch_file, hdf5v2::API_TEST_PATCH)
            .context(|| format!("writing {}", patch_file.display()))?;
        let patch = find_program("patch").ok_or_else(|| {
            Error::new(format!(
                "step '{step}': `patch` not found on PATH (apt-get install patch)"
            ))
        })?;
        let mut cmd = Command::new(patch);
        cmd.args(["-p1", "--forward", "--batch", "-d"])
            .arg(&src)
            .arg("-i")
            .arg(&patch_file);
        run_step(
            "patch the API tests for HDF5 2.x",
            &mut cmd,
            &dirs.logs.join("api-test-patch.log"),
        )?;
        let template = src.join("H5_api_test_config.h.in");
        let text = std::fs::read_to_string(&template)
            .context(|| format!("reading {}", template.display()))?;
        let header = src.join("H5_api_test_config.h");
        std::fs::write(&header, hdf5v2::configure_header(&text))
            .context(|| format!("writing {}", header.display()))?;
        let globals = src.join(hdf5v2::API_TEST_GLOBALS_NAME);
        std::fs::write(&globals, hdf5v2::API_TEST_GLOBALS)
            .context(|| format!("writing {}", globals.display()))?;
        let lists = test_dir.join("API/CMakeLists.txt");
        let areas = hdf5v2::api_areas_from_cmakelists(
            &std::fs::read_to_string(&lists).context(|| format!("reading {}", lists.display()))?,
        )
        .map_err(|e| Error::new(format!("{}: {e}", lists.display())))?;
        let exe = bin.join("h5_api_test");
        let mut cmd = Command::new(&cc);
        cmd.args(hdf5v2::api_test_compile_args(
            &src,
            &dirs.src,
            &dirs.build,
            &exe,
            &areas,
        ))
        .current_dir(api);
        let log = dirs.logs.join("api-test-compile.log");
        run_step(step, &mut cmd, &log)?;
        let ctest = api.join("CTestTestfile.cmake");
        std::fs::write(
            &ctest,
            hdf5v2::ctest_file(&exe, &areas, crate::suites::DEFAULT_TIMEOUT_SECS),
        )
        .context(|| format!("writing {}", ctest.display()))?;
        let stamp = api.join(hdf5v2::API_TEST_STAMP_NAME);
        std::fs::write(&stamp, hdf5v2::api_test_stamp(library_stamp, &cc))
            .context(|| format!("writing {}", stamp.display()))?;
        println!(
            "[build-hdf5] h5_api_test for areas {} built with `{}`",
            areas.join(" "),
            command_line(&cmd)
        );
        timer.record("build h5_api_test", start.elapsed().as_secs_f64());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::header_defines_one;

    #[test]
    fn reads_h5pubconf_defines() {
        // As HDF5 1.14.5's CMake writes them (thread-safe build, serial build).
        let ts = "/* #undef H5_HAVE_PARALLEL */\n#if defined(_WIN32) && !defined(H5_BUILT_AS_DYNAMIC_LIB)\n\
                  /* #undef H5_HAVE_THREADSAFE */\n#else\n# define H5_HAVE_THREADSAFE 1\n#endif\n";
        assert!(header_defines_one(ts, "H5_HAVE_THREADSAFE"));
        assert!(!header_defines_one(ts, "H5_HAVE_PARALLEL"));
        let serial = "/* #undef H5_HAVE_THREADSAFE */\n#define H5_HAVE_PARALLEL 1\n";
        assert!(!header_defines_one(serial, "H5_HAVE_THREADSAFE"));
        assert!(header_defines_one(serial, "H5_HAVE_PARALLEL"));
        // Other names and values do not count.
        assert!(!header_defines_one(
            "#define H5_HAVE_THREADSAFE_X 1\n#define H5_HAVE_THREADSAFE 0\n#defineH5_HAVE_THREADSAFE 1\n",
            "H5_HAVE_THREADSAFE"
        ));
    }
}

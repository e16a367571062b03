//! `build-hdf5`: obtains HDF5 1.14 (an existing `HDF5_DIR`, or Debian's source package built
//! into the cache) and links it into `<repo>/.deps`.

use crate::error::{Context, Error, Result};
use crate::h5version::{self, MINIMUM};
use crate::paths::{
    self, Variant, VariantDirs, APT_SOURCES_PATH, APT_SOURCES_TEXT, DEBIAN_SOURCE_VERSION,
};
use crate::process::{find_program, run_step, tail};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Settings of one bootstrap.
#[derive(Debug, Clone)]
pub struct Bootstrap {
    /// serial or parallel.
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

struct Timer {
    steps: Vec<(String, f64)>,
}

impl Timer {
    fn record(&mut self, step: &str, secs: f64) {
        println!("[build-hdf5] {step}: {secs:.1} s");
        self.steps.push((step.to_string(), secs));
    }
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

/// True when the HDF5 installation `dir` was built with MPI (`H5_HAVE_PARALLEL` in its
/// `include/H5pubconf.h`); false when unreadable.
pub fn is_parallel_install(dir: &Path) -> bool {
    std::fs::read_to_string(dir.join("include/H5pubconf.h")).is_ok_and(|text| {
        text.lines()
            .any(|l| l.trim_start().starts_with("#define H5_HAVE_PARALLEL 1"))
    })
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
        let mut timer = Timer { steps: Vec::new() };
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
        std::fs::create_dir_all(&dirs.build)
            .context(|| format!("creating {}", dirs.build.display()))?;

        let mut cmd = Command::new("cmake");
        cmd.args(paths::configure_args(self.variant, &dirs))
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

        let mut cmd = Command::new("cmake");
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

        let mut cmd = Command::new("cmake");
        cmd.arg("--install").arg(&dirs.build);
        timer.record(
            "install",
            run_step(
                "install (cmake --install)",
                &mut cmd,
                &dirs.logs.join("install.log"),
            )?,
        );

        let version = h5version::read_installation(&dirs.install)?;
        if version < MINIMUM {
            return Err(Error::new(format!(
                "step 'verify': built HDF5 reports version {version}, below {MINIMUM}"
            )));
        }
        std::fs::write(&dirs.stamp, &stamp)
            .context(|| format!("writing {}", dirs.stamp.display()))?;
        self.link(&dirs)?;
        let total: f64 = timer.steps.iter().map(|(_, s)| s).sum();
        let parts: Vec<String> = timer
            .steps
            .iter()
            .map(|(n, s)| format!("{n} {s:.1} s"))
            .collect();
        println!(
            "[build-hdf5] done: HDF5 {version} in {}; total {total:.1} s ({})",
            dirs.install.display(),
            parts.join(", ")
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
                 to run `hdf5-test-harness run`, build one with `env -u HDF5_DIR hdf5-test-harness build-hdf5`"
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
        let need_source = !dirs.src.join("CMakeLists.txt").is_file();
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
                if sources_current { "" } else { "; apt source entry not present" }
            )));
        }
        if !sources_current {
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

    fn fetch_source(&self, dirs: &VariantDirs, timer: &mut Timer) -> Result<()> {
        let step = "download HDF5 source package";
        std::fs::create_dir_all(&dirs.download)
            .context(|| format!("creating {}", dirs.download.display()))?;
        let dsc_name = format!("hdf5_{DEBIAN_SOURCE_VERSION}.dsc");
        let dsc = dirs.download.join(&dsc_name);
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
        if let Ok(entries) = std::fs::read_dir(&dirs.root) {
            for e in entries.flatten() {
                let name = e.file_name();
                if name.to_string_lossy().contains(".orig.tar.")
                    && dirs.download.join(&name).is_file()
                {
                    let _ = std::fs::remove_file(e.path());
                }
            }
        }
        timer.record("extract source", secs);
        Ok(())
    }
}

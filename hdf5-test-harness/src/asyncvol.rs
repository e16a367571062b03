//! `build-async`: HDF5's asynchronous I/O connector (vol-async 1.8.1, LBNL) and the
//! Argobots 1.2 threading library it runs on, built from the unmodified release sources
//! kept in `../shared/vendor` (neither is packaged by Debian 12 or a registry), against the
//! thread-safe HDF5 1.14.5 (`build-hdf5 --variant threadsafe`), and cached like the HDF5
//! variants.
//!
//! Layout under the cache root:
//! - `argobots-1.2/{src,install,logs}`: `./autogen.sh`, `./configure --prefix`, `make`,
//!   `make install`;
//! - `vol-async-1.8.1-threadsafe-exec-time/`: `src/` (the release, with the lines of
//!   [`PATCHES`] mended), `plugin/libh5async.so` (a plugin
//!   directory holding only the connector: HDF5 dlopens every `lib*.so` in
//!   `HDF5_PLUGIN_PATH`), and `tests/` with vol-async's own serial tests, each compiled with
//!   its `h5_async_lib.c` (`H5Fwait`, `H5Dwait`, ...) as its CMake does, but not linked with
//!   `libh5async.so`: vol-async is then in a test's process only as the plugin HDF5 loaded.
//!
//! Each directory is complete only when its stamp (`h5prov-build.stamp`) is there and says
//! what it was built from: the stamp is removed before a build starts and written after the
//! last step, so an interrupted build is redone, never taken for a complete one. A stamp that
//! differs (another HDF5, a rebuilt HDF5, another Argobots) rebuilds. The links
//! `<repo>/.deps/argobots` and `<repo>/.deps/vol-async` point at the two directories.
//!
//! vol-async's CMake wants MPI; the library itself builds without it (every MPI call is under
//! `#ifdef MPI_VERSION`), with one compiler call, which is what is done here.

use crate::bootstrap::set_link;
use crate::error::{Context, Error, Result};
use crate::process::{fresh_dir, run_step};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The Argobots release tarball in the vendor directory.
pub const ARGOBOTS_TARBALL: &str = "argobots-1.2.tar.gz";
/// The vol-async release tarball in the vendor directory.
pub const VOL_ASYNC_TARBALL: &str = "vol-async-1.8.1.tar.gz";
/// vol-async's serial tests (its `test/CMakeLists.txt`, without MPI), built into `tests/`.
pub const SERIAL_TESTS: [&str; 6] = [
    "async_test_multifile",
    "async_test_serial",
    "async_test_serial2",
    "async_test_serial_event_set",
    "async_test_serial_event_set_error_stack",
    "async_test_serial_mdset",
];
/// The Debian packages Argobots' `autogen.sh` needs.
pub const PACKAGES: [&str; 3] = ["autoconf", "automake", "libtool"];

/// The cache directories of one async build.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AsyncDirs {
    /// `<cache>/argobots-1.2`.
    pub argobots: PathBuf,
    /// `<cache>/vol-async-1.8.1-threadsafe-exec-time` (see [`PATCHES`]).
    pub vol_async: PathBuf,
}

impl AsyncDirs {
    /// The layout under `cache_root`.
    pub fn new(cache_root: &Path) -> AsyncDirs {
        AsyncDirs {
            argobots: cache_root.join("argobots-1.2"),
            // Named for its patches too: a build with fewer of them (an older checkout's)
            // keeps its own directory instead of being rebuilt back and forth.
            vol_async: cache_root.join("vol-async-1.8.1-threadsafe-exec-time"),
        }
    }

    /// Argobots' install prefix.
    pub fn argobots_install(&self) -> PathBuf {
        self.argobots.join("install")
    }
}

/// The stamp file of a build directory.
fn stamp_path(dir: &Path) -> PathBuf {
    dir.join("h5prov-build.stamp")
}

/// What a file is, for a stamp: its canonical path, size and modification time (seconds), so that a
/// replaced tarball or a rebuilt library changes the stamp.
fn file_identity(p: &Path) -> Result<String> {
    // The canonical path: the same file reached from two checkouts is one build.
    let p = &std::fs::canonicalize(p).context(|| format!("resolving {}", p.display()))?;
    let m = std::fs::metadata(p).context(|| format!("reading {}", p.display()))?;
    let mtime = m
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_secs());
    Ok(format!("{} {} bytes mtime {mtime}", p.display(), m.len()))
}

/// The stamp of the Argobots build from `tarball`.
pub fn argobots_stamp(tarball_identity: &str) -> String {
    format!("argobots 1.2\nsource {tarball_identity}\nconfigure --prefix=<dir>/install --disable-static\n")
}

/// The stamp of the vol-async build from `tarball` against the HDF5 library `hdf5_lib` and
/// the Argobots library `abt_lib` (identities from `file_identity`).
pub fn vol_async_stamp(tarball_identity: &str, hdf5_lib: &str, abt_lib: &str) -> String {
    format!(
        "vol-async 1.8.1\nsource {tarball_identity}\npatches {}\nhdf5 {hdf5_lib}\n\
         argobots {abt_lib}\ntests {}\n",
        PATCHES
            .iter()
            .map(|(_, good)| good.trim_end().replace('\n', " / "))
            .collect::<Vec<_>>()
            .join(" | "),
        SERIAL_TESTS.join(" ")
    )
}

/// The one line of vol-async 1.8.1 that the build mends (`src/h5_async_vol.c`,
/// `H5VL_async_str_to_info`, copied from HDF5's pass-through template): it allocates
/// `end - start` bytes for the `end - start - 1` characters between the braces of
/// `under_info={...}`, copies them, then writes the terminating NUL at index `end - start`,
/// one byte past the allocation, and leaves the last character uninitialised. The write
/// corrupts malloc's heap whenever the string's length makes the allocation end exactly
/// (an under connector string of 88 characters with glibc: `malloc(): invalid next size`,
/// before the application does anything), and the connector below receives a string whose
/// last character is garbage. Upstream's fix is this line: the NUL at `end - start - 1`.
pub const STR_TO_INFO_FIX: (&str, &str) = (
    "*(under_vol_info_str + (under_vol_info_end - under_vol_info_start)) = '\\0';",
    "*(under_vol_info_str + (under_vol_info_end - under_vol_info_start) - 1) = '\\0';",
);

/// The line of vol-async 1.8.1 that gives `H5VL_REQUEST_GET_EXEC_TIME`'s execution time
/// (`H5VL_async_request_specific`): `(end_time - start_time) / (CLOCKS_PER_SEC *
/// 1000000000LL)` divides a tick count by 10^15, so the answer is always 0. The mended line
/// converts ticks to nanoseconds, the unit HDF5 documents (`H5ES_op_info_t.exec_time`).
pub const EXEC_TIME_FIX: (&str, &str) = (
    "(uint64_t)((task->end_time - task->start_time) / (CLOCKS_PER_SEC * 1000000000LL));",
    "(uint64_t)((task->end_time - task->start_time) * (1000000000LL / CLOCKS_PER_SEC));",
);

/// The line after which vol-async 1.8.1's clock is made a wall clock. Its task times
/// (`create_time`, `start_time`, `end_time`) and its `request_wait` timeout come from
/// `clock()`, the CPU time of the whole process: while a task runs on the background
/// thread and the application computes, that clock runs twice as fast as the wall clock
/// (and not at all while both wait on I/O). The line added after `#include "abt.h"` makes
/// every `clock()` in the file Argobots' wall clock (`ABT_get_wtime`, seconds), in the
/// same `CLOCKS_PER_SEC` ticks.
pub const WALL_CLOCK_FIX: (&str, &str) = (
    "#include \"abt.h\"\n",
    "#include \"abt.h\"\n#define clock() ((clock_t)(ABT_get_wtime() * CLOCKS_PER_SEC))\n",
);

/// The lines [`AsyncBuild`] mends in vol-async 1.8.1's `src/h5_async_vol.c`, each `(what
/// is there, what replaces it)`; each is documented at its constant and in docs/ASYNC.md.
pub const PATCHES: [(&str, &str); 3] = [STR_TO_INFO_FIX, EXEC_TIME_FIX, WALL_CLOCK_FIX];

/// Applies [`PATCHES`] to vol-async's source file `c`; an error naming the line when one
/// is not there exactly once (another vol-async release).
fn mend(c: &Path) -> Result<()> {
    let mut text = std::fs::read_to_string(c).context(|| format!("reading {}", c.display()))?;
    for (bad, good) in PATCHES {
        if text.matches(bad).count() != 1 {
            return Err(Error::new(format!(
                "{}: expected vol-async 1.8.1's line `{}` exactly once",
                c.display(),
                bad.trim_end()
            )));
        }
        text = text.replacen(bad, good, 1);
    }
    std::fs::write(c, text).context(|| format!("writing {}", c.display()))
}

/// Settings of one `build-async`.
#[derive(Debug, Clone)]
pub struct AsyncBuild {
    /// The cache root.
    pub cache_root: PathBuf,
    /// The repository (for the `.deps` links).
    pub repo_root: PathBuf,
    /// Where the release tarballs are.
    pub vendor_dir: PathBuf,
    /// The thread-safe HDF5 installation.
    pub hdf5: PathBuf,
    /// Parallel build jobs.
    pub jobs: usize,
}

impl AsyncBuild {
    /// Builds what is missing or stale and refreshes the `.deps` links.
    pub fn run(&self) -> Result<AsyncDirs> {
        let dirs = AsyncDirs::new(&self.cache_root);
        // Argobots does not depend on HDF5.
        self.argobots(&dirs)?;
        if !crate::bootstrap::is_threadsafe_install(&self.hdf5) {
            return Err(Error::new(format!(
                "{} is not a thread-safe HDF5 (its include/H5pubconf.h does not define \
                 H5_HAVE_THREADSAFE); vol-async needs one: run `hdf5-test-harness build-hdf5 \
                 --variant threadsafe` first",
                self.hdf5.display()
            )));
        }
        self.vol_async(&dirs)?;
        let deps = self.repo_root.join(".deps");
        set_link(&deps.join("argobots"), &dirs.argobots_install())?;
        set_link(&deps.join("vol-async"), &dirs.vol_async)?;
        println!(
            "[build-async] linked {} -> {} and {} -> {}",
            deps.join("argobots").display(),
            dirs.argobots_install().display(),
            deps.join("vol-async").display(),
            dirs.vol_async.display()
        );
        Ok(dirs)
    }

    fn tarball(&self, name: &str) -> Result<PathBuf> {
        let p = self.vendor_dir.join(name);
        if p.is_file() {
            Ok(p)
        } else {
            Err(Error::new(format!(
                "{} is missing: the vendored release sources are expected in {} (set \
                 H5PROV_VENDOR_DIR to the directory holding {ARGOBOTS_TARBALL} and \
                 {VOL_ASYNC_TARBALL})",
                p.display(),
                self.vendor_dir.display()
            )))
        }
    }

    /// Extracts `tarball` into `dest` (emptied first), dropping its top directory.
    fn extract(tarball: &Path, dest: &Path, log: &Path) -> Result<f64> {
        fresh_dir(dest)?;
        let mut cmd = Command::new("tar");
        cmd.arg("xzf")
            .arg(tarball)
            .arg("--strip-components=1")
            .arg("-C")
            .arg(dest);
        run_step("extract", &mut cmd, log)
    }

    fn argobots(&self, dirs: &AsyncDirs) -> Result<()> {
        let tarball = self.tarball(ARGOBOTS_TARBALL)?;
        let stamp = argobots_stamp(&file_identity(&tarball)?);
        let root = &dirs.argobots;
        let lib = dirs.argobots_install().join("lib/libabt.so");
        if std::fs::read_to_string(stamp_path(root)).ok().as_deref() == Some(stamp.as_str())
            && lib.is_file()
        {
            println!(
                "[build-async] Argobots 1.2 is up to date in {}",
                root.display()
            );
            return Ok(());
        }
        for p in PACKAGES {
            if crate::process::find_program(match p {
                "libtool" => "libtoolize",
                other => other,
            })
            .is_none()
            {
                return Err(Error::new(format!(
                    "building Argobots needs {}: install the Debian packages `{}` (scripts/test.sh \
                     does)",
                    p,
                    PACKAGES.join(" ")
                )));
            }
        }
        let _ = std::fs::remove_file(stamp_path(root));
        let (src, install, logs) = (root.join("src"), root.join("install"), root.join("logs"));
        let mut total = Self::extract(&tarball, &src, &logs.join("extract.log"))?;
        fresh_dir(&install)?;
        let mut cmd = Command::new("sh");
        cmd.arg("./autogen.sh").current_dir(&src);
        total += run_step("autogen (Argobots)", &mut cmd, &logs.join("autogen.log"))?;
        let mut cmd = Command::new("sh");
        // Only the shared library: libtool would compile every source twice for both.
        cmd.arg("./configure")
            .arg(format!("--prefix={}", install.display()))
            .arg("--disable-static")
            .current_dir(&src);
        total += run_step(
            "configure (Argobots)",
            &mut cmd,
            &logs.join("configure.log"),
        )?;
        let mut cmd = Command::new("make");
        cmd.arg(format!("-j{}", self.jobs)).current_dir(&src);
        total += run_step("make (Argobots)", &mut cmd, &logs.join("build.log"))?;
        let mut cmd = Command::new("make");
        cmd.arg("install").current_dir(&src);
        total += run_step(
            "make install (Argobots)",
            &mut cmd,
            &logs.join("install.log"),
        )?;
        if !lib.is_file() {
            return Err(Error::new(format!(
                "Argobots' install did not produce {} (logs in {})",
                lib.display(),
                logs.display()
            )));
        }
        std::fs::write(stamp_path(root), &stamp)
            .context(|| format!("writing {}", stamp_path(root).display()))?;
        println!(
            "[build-async] built Argobots 1.2 into {} in {total:.1} s",
            install.display()
        );
        Ok(())
    }

    /// The compiler arguments shared by the library and the tests: the vol-async sources'
    /// headers, Argobots and HDF5, with run paths to both.
    fn c_flags(&self, dirs: &AsyncDirs, src: &Path) -> Vec<String> {
        let abt = dirs.argobots_install();
        let mut a = vec![
            "-O2".to_string(),
            format!("-I{}", src.join("src").display()),
        ];
        for dir in [&abt, &self.hdf5] {
            a.push(format!("-I{}", dir.join("include").display()));
        }
        for dir in [&abt, &self.hdf5] {
            let lib = dir.join("lib");
            a.push(format!("-L{}", lib.display()));
            a.push(format!("-Wl,-rpath,{}", lib.display()));
        }
        a
    }

    fn vol_async(&self, dirs: &AsyncDirs) -> Result<()> {
        let tarball = self.tarball(VOL_ASYNC_TARBALL)?;
        let hdf5_lib = self.hdf5.join("lib/libhdf5.so");
        let abt_lib = dirs.argobots_install().join("lib/libabt.so");
        let stamp = vol_async_stamp(
            &file_identity(&tarball)?,
            &file_identity(&hdf5_lib)?,
            &file_identity(&abt_lib)?,
        );
        let root = &dirs.vol_async;
        let plugin = root.join("plugin/libh5async.so");
        let tests = root.join("tests");
        if std::fs::read_to_string(stamp_path(root)).ok().as_deref() == Some(stamp.as_str())
            && plugin.is_file()
            && SERIAL_TESTS.iter().all(|t| tests.join(t).is_file())
        {
            println!(
                "[build-async] vol-async 1.8.1 is up to date in {}",
                root.display()
            );
            return Ok(());
        }
        let _ = std::fs::remove_file(stamp_path(root));
        let (src, logs) = (root.join("src"), root.join("logs"));
        let mut total = Self::extract(&tarball, &src, &logs.join("extract.log"))?;
        mend(&src.join("src/h5_async_vol.c"))?;
        fresh_dir(&root.join("plugin"))?;
        fresh_dir(&tests)?;
        let flags = self.c_flags(dirs, &src);
        let mut cmd = Command::new("cc");
        cmd.args(["-fPIC", "-shared", "-o"])
            .arg(&plugin)
            .arg(src.join("src/h5_async_vol.c"))
            .args(&flags)
            .args(["-labt", "-lhdf5"]);
        total += run_step("compile (vol-async)", &mut cmd, &logs.join("build.log"))?;
        // Unlike vol-async's CMake, the tests do not link libh5async.so: they need only
        // h5_async_lib.c and HDF5, so vol-async is in a test's process only when HDF5 loaded
        // it as a plugin, which the tests can then prove.
        for t in SERIAL_TESTS {
            let mut cmd = Command::new("cc");
            cmd.arg("-o")
                .arg(tests.join(t))
                .arg(src.join("test").join(format!("{t}.c")))
                .arg(src.join("src/h5_async_lib.c"))
                .args(&flags)
                .arg("-lhdf5");
            total += run_step(
                &format!("compile test {t}"),
                &mut cmd,
                &logs.join(format!("test-{t}.log")),
            )?;
        }
        std::fs::write(stamp_path(root), &stamp)
            .context(|| format!("writing {}", stamp_path(root).display()))?;
        println!(
            "[build-async] built vol-async 1.8.1 and its {} serial tests into {} in {total:.1} s",
            SERIAL_TESTS.len(),
            root.display()
        );
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout() {
        let d = AsyncDirs::new(Path::new("/c"));
        assert_eq!(d.argobots, Path::new("/c/argobots-1.2"));
        assert_eq!(d.argobots_install(), Path::new("/c/argobots-1.2/install"));
        assert_eq!(
            d.vol_async,
            Path::new("/c/vol-async-1.8.1-threadsafe-exec-time")
        );
    }

    #[test]
    fn stamps_change_with_their_inputs() {
        let a = vol_async_stamp("t 1 bytes mtime 1", "h 1 bytes mtime 1", "a");
        assert_ne!(
            a,
            vol_async_stamp("t 1 bytes mtime 1", "h 1 bytes mtime 2", "a")
        );
        assert_ne!(
            a,
            vol_async_stamp("t 2 bytes mtime 1", "h 1 bytes mtime 1", "a")
        );
        assert_ne!(argobots_stamp("x"), argobots_stamp("y"));
        // A build with other patches is another build.
        for (_, good) in PATCHES {
            let line = good.trim_end().replace('\n', " / ");
            assert!(a.contains(&line), "{line} not in the stamp:\n{a}");
        }
    }

    #[test]
    fn every_patch_applies_once_to_its_line() {
        let dir = std::env::temp_dir().join(format!("h5prov-mend-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let c = dir.join("h5_async_vol.c");
        let before: String = PATCHES.iter().map(|(bad, _)| format!("{bad}\n")).collect();
        std::fs::write(&c, &before).unwrap();
        mend(&c).unwrap();
        let after = std::fs::read_to_string(&c).unwrap();
        for (_, good) in PATCHES {
            assert!(after.contains(good), "{after}");
        }
        assert!(
            after.contains("1000000000LL / CLOCKS_PER_SEC") && after.contains("#define clock()")
        );
        // Another release (a line missing) is an error naming the line.
        std::fs::write(&c, "int x;\n").unwrap();
        let e = mend(&c).unwrap_err().to_string();
        assert!(e.contains("exactly once"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

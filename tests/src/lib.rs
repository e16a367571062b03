//! Helpers for h5prov's integration tests: real HDF5 programs (the installed tools and small
//! C programs compiled against the same HDF5) run with the real `libh5prov.so` loaded.
//!
//! Python applications that bring their own HDF5 (h5py and netCDF4 wheels, see
//! [`wheels_python`]) run with [`Run::app`], which keeps the workspace's HDF5 out of their way.
//!
//! Every test that claims to exercise h5prov proves it was loaded: HDF5 silently falls back
//! to the native connector when a named connector cannot be loaded. [`Run::with_h5prov`]
//! checks that the process wrote its h5prov metadata record.
#![forbid(unsafe_code)]

use serde_json::Value;
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The repository root.
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// The HDF5 installation the workspace builds against (`$HDF5_DIR` or `.deps/hdf5`).
pub fn hdf5_dir() -> PathBuf {
    let p = std::env::var_os("HDF5_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join(".deps/hdf5"));
    std::fs::canonicalize(&p).unwrap_or_else(|e| {
        panic!(
            "HDF5 not found at {} ({e}); run `cargo run -p hdf5-test-harness -- build-hdf5` first",
            p.display()
        )
    })
}

/// A tool from the HDF5 installation (`h5dump`, `h5ls`, ...).
pub fn tool(name: &str) -> PathBuf {
    hdf5_dir().join("bin").join(name)
}

/// The directory holding `libh5prov.so`, built in the same profile as the tests.
pub fn plugin_dir() -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        // target/<profile>/deps/<test-binary> -> target/<profile>
        let exe = std::env::current_exe().unwrap();
        let profile_dir = exe.parent().unwrap().parent().unwrap().to_path_buf();
        let so = profile_dir.join("libh5prov.so");
        assert!(
            so.exists(),
            "{} is missing: build the connector first (cargo build -p h5prov)",
            so.display()
        );
        // HDF5 dlopens every lib*.so in HDF5_PLUGIN_PATH: give it a directory with only ours.
        let dir = profile_dir.join("h5prov-plugin");
        std::fs::create_dir_all(&dir).unwrap();
        // Copy then rename: overwriting a library another process has mapped kills it (SIGBUS).
        let tmp = dir.join(format!(".libh5prov.so.{}", std::process::id()));
        std::fs::copy(&so, &tmp).unwrap();
        std::fs::rename(&tmp, dir.join("libh5prov.so")).unwrap();
        dir
    })
    .clone()
}

/// A directory for test outputs: `target/tmp/h5prov-tests` (from the test binary's path,
/// `target/<profile>/deps/<binary>`).
pub fn tmp_root() -> PathBuf {
    target_dir().join("tmp").join("h5prov-tests")
}

/// Compiles `tests/c/<name>.c` against the HDF5 installation (once per test binary).
pub fn c_program(name: &str) -> PathBuf {
    let out_dir = tmp_root().join("c-programs");
    std::fs::create_dir_all(&out_dir).unwrap();
    let exe = out_dir.join(name);
    let src = repo().join("tests/c").join(format!("{name}.c"));
    // Tests in one binary run in parallel: compile under a lock, and decide freshness
    // under it, so a program is never compiled twice or read half-written.
    static COMPILE: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one_at_a_time = COMPILE.lock().unwrap_or_else(|e| e.into_inner());
    let fresh = exe
        .metadata()
        .and_then(|m| m.modified())
        .ok()
        .zip(newest_source(&src))
        .is_some_and(|(e, s)| e >= s);
    if !fresh {
        let tmp = compile_c("cc", name, Some(&hdf5_dir()), &[]);
        std::fs::rename(&tmp, &exe).unwrap();
    }
    exe
}

/// When `src` or a header next to it (`tests/c/insights/fixture.h`) last changed.
fn newest_source(src: &Path) -> Option<std::time::SystemTime> {
    let modified = |p: &Path| p.metadata().and_then(|m| m.modified()).ok();
    let dir = std::fs::read_dir(src.parent()?).ok()?;
    let headers = dir
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "h"))
        .filter_map(|p| modified(&p));
    Some(headers.fold(modified(src)?, |a, b| a.max(b)))
}

/// Compiles `tests/c/<name>.c` with `compiler` (`cc`, `mpicc`) into a file of its own for
/// this test process; against the HDF5 installation `hdf5` (include, link, run path) when
/// given, plus `libs` (`-ldl`, `-lpthread`).
pub fn compile_c(compiler: &str, name: &str, hdf5: Option<&Path>, libs: &[&str]) -> PathBuf {
    let out_dir = tmp_root().join("c-programs");
    std::fs::create_dir_all(&out_dir).unwrap();
    let exe = out_dir.join(format!("{name}.{compiler}.{}", std::process::id()));
    // `name` may name a subdirectory of tests/c (`insights/chunks`).
    std::fs::create_dir_all(exe.parent().unwrap()).unwrap();
    let src = repo().join("tests/c").join(format!("{name}.c"));
    let mut cmd = Command::new(compiler);
    cmd.args(["-std=c99", "-Wall", "-Werror", "-o"])
        .arg(&exe)
        .arg(&src);
    if let Some(h) = hdf5 {
        let lib = h.join("lib");
        cmd.arg(format!("-I{}", h.join("include").display()))
            .arg(format!("-L{}", lib.display()))
            .arg(format!("-Wl,-rpath,{}", lib.display()))
            .arg("-lhdf5");
    }
    let out = cmd
        .args(libs)
        .output()
        .unwrap_or_else(|e| panic!("run {compiler}: {e}"));
    assert!(
        out.status.success(),
        "compiling {} with {compiler}:\n{}",
        src.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    exe
}

/// For tests whose subject is per-process state (h5prov binds once per process): in the
/// test process, runs test `name` alone in a child copy of this test binary, asserts it
/// succeeded and returns its description and stderr; in that child, returns `None`, and the
/// test goes on to do the work.
pub fn in_child_process(name: &str) -> Option<(String, String)> {
    const CHILD: &str = "H5PROV_TEST_CHILD";
    if std::env::var_os(CHILD).is_some() {
        return None;
    }
    let exe = std::env::current_exe().unwrap();
    let out = Command::new(&exe)
        .args(["--exact", name, "--nocapture"])
        .env(CHILD, name)
        .output()
        .unwrap();
    let desc = describe_output(&format!("{} {name} (child)", exe.display()), &out);
    assert!(out.status.success(), "{desc}");
    Some((desc, String::from_utf8_lossy(&out.stderr).into_owned()))
}

/// A fresh scratch directory, removed when its test passes.
pub fn scratch(name: &str) -> Scratch {
    Scratch::fresh(
        tmp_root()
            .join("scratch")
            .join(format!("{name}-{}", std::process::id())),
    )
}

/// A scratch directory (see [`scratch`]). Dropped on a passing test, it is removed, so that
/// the whole suite's traces and HDF5 files never pile up on the disk (they reached ~2 GB);
/// dropped while its thread panics, it stays as the failure's evidence.
#[derive(Debug)]
pub struct Scratch(PathBuf);

impl Scratch {
    /// Directory `dir`, emptied (removed and made again).
    pub fn fresh(dir: PathBuf) -> Scratch {
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    /// The directory, kept for good: for one built once and shared by a binary's tests.
    pub fn keep(mut self) -> PathBuf {
        std::mem::take(&mut self.0)
    }
}

impl std::ops::Deref for Scratch {
    type Target = PathBuf;
    fn deref(&self) -> &PathBuf {
        &self.0
    }
}

impl AsRef<Path> for Scratch {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<std::ffi::OsStr> for Scratch {
    fn as_ref(&self) -> &std::ffi::OsStr {
        self.0.as_os_str()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        // Empty once kept.
        if !std::thread::panicking() && !self.0.as_os_str().is_empty() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

/// One program run, with or without h5prov.
pub struct Run {
    cmd: Command,
    program: PathBuf,
    args: Vec<String>,
    cwd: PathBuf,
    /// Environment changes in the order first made: `None` removes the variable.
    env: Vec<(String, Option<String>)>,
    traces: Option<PathBuf>,
}

impl Run {
    /// Runs `program` with `args` in `cwd` with no HDF5 variables at all: no VOL connector,
    /// no plugin path, no `LD_LIBRARY_PATH`. For applications that bring their own HDF5
    /// (Python wheels bundle theirs), which the workspace's HDF5 must not shadow.
    pub fn app(program: &Path, args: &[&str], cwd: &Path) -> Run {
        let mut cmd = Command::new(program);
        cmd.args(args).current_dir(cwd);
        let mut r = Run {
            cmd,
            program: program.to_path_buf(),
            args: args.iter().map(|a| a.to_string()).collect(),
            cwd: cwd.to_path_buf(),
            env: Vec::new(),
            traces: None,
        };
        for k in ["HDF5_VOL_CONNECTOR", "HDF5_PLUGIN_PATH", "LD_LIBRARY_PATH"] {
            r.set_env(k, None);
        }
        r
    }

    /// Runs the Python script `script` with `args` in `cwd` under the wheels venv's
    /// interpreter ([`wheels_python`]), as [`Run::app`] does a program (h5py and netCDF4
    /// bring their own HDF5): only the venv's packages (no `PYTHONPATH`, `PYTHONHOME` or
    /// user site) and no `__pycache__` written next to the script.
    pub fn python(script: &Path, args: &[&str], cwd: &Path) -> Run {
        let mut argv = vec![script.to_str().expect("UTF-8 script path")];
        argv.extend_from_slice(args);
        Run::app(&wheels_python(), &argv, cwd)
            .env_remove("PYTHONPATH")
            .env_remove("PYTHONHOME")
            .env("PYTHONNOUSERSITE", "1")
            .env("PYTHONDONTWRITEBYTECODE", "1")
    }

    /// Runs `program` with `args` in `cwd`, natively (no VOL connector variable), on the
    /// workspace's HDF5 (`LD_LIBRARY_PATH`).
    pub fn native(program: &Path, args: &[&str], cwd: &Path) -> Run {
        let lib = hdf5_dir().join("lib");
        Run::app(program, args, cwd).env("LD_LIBRARY_PATH", &lib.to_string_lossy())
    }

    /// Runs `program` with h5prov loaded: `options` follow `under_vol=0;under_info={}`, and
    /// `path=<traces>` is added. The run proves h5prov was loaded (a metadata record).
    pub fn with_h5prov(
        program: &Path,
        args: &[&str],
        cwd: &Path,
        traces: &Path,
        options: &str,
    ) -> Run {
        Run::native(program, args, cwd).h5prov(traces, options)
    }

    /// Loads h5prov into this run (`HDF5_PLUGIN_PATH` = [`plugin_dir`] and
    /// `HDF5_VOL_CONNECTOR`): `options` follow `under_vol=0;under_info={}`, and
    /// `path=<traces>` is added. The run proves h5prov was loaded (a metadata record).
    pub fn h5prov(self, traces: &Path, options: &str) -> Run {
        let conn = format!(
            "h5prov under_vol=0;under_info={{}};path={}{}{}",
            traces.display(),
            if options.is_empty() { "" } else { ";" },
            options
        );
        let mut r = self
            .env("HDF5_PLUGIN_PATH", &plugin_dir().to_string_lossy())
            .env("HDF5_VOL_CONNECTOR", &conn);
        r.traces = Some(traces.to_path_buf());
        r
    }

    /// Runs with a raw `HDF5_VOL_CONNECTOR` value (no proof of loading).
    pub fn with_connector(program: &Path, args: &[&str], cwd: &Path, conn: &str) -> Run {
        Run::native(program, args, cwd)
            .env("HDF5_PLUGIN_PATH", &plugin_dir().to_string_lossy())
            .env("HDF5_VOL_CONNECTOR", conn)
    }

    /// Sets an environment variable.
    pub fn env(mut self, k: &str, v: &str) -> Run {
        self.set_env(k, Some(v));
        self
    }

    /// Removes an environment variable.
    pub fn env_remove(mut self, k: &str) -> Run {
        self.set_env(k, None);
        self
    }

    fn set_env(&mut self, k: &str, v: Option<&str>) {
        match v {
            Some(v) => self.cmd.env(k, v),
            None => self.cmd.env_remove(k),
        };
        let v = v.map(str::to_string);
        match self.env.iter_mut().find(|(key, _)| key == k) {
            Some(e) => e.1 = v,
            None => self.env.push((k.to_string(), v)),
        }
    }

    /// The command as a shell line that reproduces it:
    /// `cd DIR && env -u VAR... VAR=value... program args...`.
    pub fn describe(&self) -> String {
        let mut s = format!("cd {} && env", shell_quote(&self.cwd.to_string_lossy()));
        // env(1) takes its options before the assignments.
        for (k, _) in self.env.iter().filter(|(_, v)| v.is_none()) {
            s += &format!(" -u {k}");
        }
        for (k, v) in &self.env {
            if let Some(v) = v {
                s += &format!(" {k}={}", shell_quote(v));
            }
        }
        s += &format!(" {}", shell_quote(&self.program.to_string_lossy()));
        for a in &self.args {
            s += &format!(" {}", shell_quote(a));
        }
        s
    }

    /// Starts the run with its stdout piped (stderr inherited): for tests that signal
    /// the program while it runs.
    pub fn spawn_piped(mut self) -> std::process::Child {
        let desc = self.describe();
        self.cmd
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("{desc}: {e}"))
    }

    /// Runs and returns the output, whatever the status.
    pub fn output(mut self) -> Output {
        let desc = self.describe();
        let out = self.cmd.output().unwrap_or_else(|e| panic!("{desc}: {e}"));
        if let Some(t) = &self.traces {
            let metas = files_with_suffix(t, ".meta.json");
            assert!(
                !metas.is_empty(),
                "h5prov was NOT loaded (no metadata record in {}): {}",
                t.display(),
                describe_output(&desc, &out)
            );
        }
        out
    }

    /// Runs and requires success; returns stdout.
    pub fn ok(self) -> String {
        let desc = self.describe();
        let out = self.output();
        assert!(
            out.status.success(),
            "command failed: {}",
            describe_output(&desc, &out)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}

/// A command and what it did, for failure messages: the command line, exit status, stdout
/// and stderr.
pub fn describe_output(desc: &str, out: &Output) -> String {
    format!(
        "{desc}\nstatus {}\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// `s` quoted for a POSIX shell where it needs it.
pub fn shell_quote(s: &str) -> String {
    let plain = !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_-./,:=@%+".contains(&b));
    if plain {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// The target directory (from the test binary's path, `target/<profile>/deps/<binary>`).
pub fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.ancestors().nth(3).unwrap().to_path_buf()
}

/// The pinned PyPI wheels of the Python tests, `tests/python/requirements.txt`.
pub fn wheels_requirements() -> PathBuf {
    repo().join("tests/python/requirements.txt")
}

/// The Python interpreter of a virtual environment holding the pinned wheels of
/// [`wheels_requirements`] (h5py and netCDF4, each bundling its own HDF5 2.x, and PyTables,
/// bundling HDF5 1.14.6), created
/// once with `$H5PROV_PYTHON -m venv` (default `python3`) and
/// `pip install --only-binary=:all:` (nothing is compiled) under
/// `target/py-wheels-venv/<key>`. The key hashes the requirements file and the base
/// interpreter's version and path, so changing either builds a new environment. Needs PyPI (or the
/// index pip is configured with) the first time; fails with pip's output when it is not
/// reachable.
pub fn wheels_python() -> PathBuf {
    static PY: OnceLock<PathBuf> = OnceLock::new();
    PY.get_or_init(|| {
        create_venv(
            &wheels_requirements(),
            "py-wheels-venv",
            &[],
            "import h5py, netCDF4, tables",
        )
    })
    .clone()
}

/// The pinned query engines of the Parquet tests, `tests/python/engines-requirements.txt`
/// (DuckDB, pyarrow, Polars, pyspark): a file of their own, so the wheel tests' venv
/// stays small and quick to create.
pub fn engines_requirements() -> PathBuf {
    repo().join("tests/python/engines-requirements.txt")
}

/// The Python interpreter of a virtual environment holding [`engines_requirements`],
/// made like [`wheels_python`]'s under `target/py-engines-venv/<key>`. pyspark is published
/// as a source archive only (pure Python with Spark's jars inside: nothing is compiled), so
/// it alone is not required to be a wheel. Spark needs Java 17 or later at run time.
pub fn engines_python() -> PathBuf {
    static PY: OnceLock<PathBuf> = OnceLock::new();
    PY.get_or_init(|| {
        create_venv(
            &engines_requirements(),
            "py-engines-venv",
            &["pyspark"],
            "import duckdb, pyarrow, polars, pyspark",
        )
    })
    .clone()
}

/// The pinned PROV validator of the provenance tests, `tests/python/prov-requirements.txt`
/// (the W3C PROV reference package `prov`).
pub fn prov_requirements() -> PathBuf {
    repo().join("tests/python/prov-requirements.txt")
}

/// The Python interpreter of a virtual environment holding [`prov_requirements`], made
/// like [`wheels_python`]'s under `target/py-prov-venv/<key>`.
pub fn prov_python() -> PathBuf {
    static PY: OnceLock<PathBuf> = OnceLock::new();
    PY.get_or_init(|| create_venv(&prov_requirements(), "py-prov-venv", &[], "import prov"))
        .clone()
}

/// Creates (once) the venv of the pinned requirements `req_path` under `target/<dir>/<key>`
/// (see [`wheels_python`]): wheels only, except the packages in `sdists`; `check` is
/// Python code that must run in the finished venv.
fn create_venv(req_path: &Path, dir: &str, sdists: &[&str], check: &str) -> PathBuf {
    create_venv_with(req_path, &[], dir, sdists, check)
}

/// [`create_venv`], also installing the local wheel files `wheels`, whose bytes are part of
/// the key (a rebuilt wheel gets a new environment).
fn create_venv_with(
    req_path: &Path,
    wheels: &[PathBuf],
    dir: &str,
    sdists: &[&str],
    check: &str,
) -> PathBuf {
    let base = std::env::var("H5PROV_PYTHON").unwrap_or_else(|_| "python3".to_string());
    let req =
        std::fs::read_to_string(req_path).unwrap_or_else(|e| panic!("{}: {e}", req_path.display()));
    let run = |cmd: &mut Command, what: &str| -> Output {
        // Nothing from outside the venv counts as installed, and pip installs into it.
        for k in [
            "PYTHONPATH",
            "PYTHONHOME",
            "PIP_USER",
            "PIP_TARGET",
            "PIP_PREFIX",
        ] {
            cmd.env_remove(k);
        }
        let desc = format!("{cmd:?}");
        let out = cmd
            .output()
            .unwrap_or_else(|e| panic!("{what}: cannot run {desc}: {e}"));
        assert!(
            out.status.success(),
            "{what}: {}",
            describe_output(&desc, &out)
        );
        out
    };
    let version = run(
        Command::new(&base).args(["-c", "import sys; print(sys.version, sys.executable)"]),
        &format!("the Python interpreter `{base}` ($H5PROV_PYTHON) does not run"),
    );
    let mut keyed = [req.as_bytes(), b"\0", &version.stdout].concat();
    for w in wheels {
        keyed.extend(std::fs::read(w).unwrap_or_else(|e| panic!("{}: {e}", w.display())));
    }
    let key = format!("{:016x}", fnv1a64(&keyed));
    let root = target_dir().join(dir);
    let venv = root.join(&key);
    let python = venv.join("bin/python");
    if python.exists() {
        return python;
    }
    std::fs::create_dir_all(&root).unwrap();
    // Build under a private name, then rename: a venv is complete when it has its name
    // (another test process may be building the same one; the first rename wins).
    let tmp = root.join(format!(".tmp-{key}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    let mut unfinished = RemoveOnDrop(Some(tmp.clone()));
    run(
        Command::new(&base).arg("-m").arg("venv").arg(&tmp),
        &format!("`{base} -m venv` failed (on Debian's own python3: apt-get install python3-venv)"),
    );
    let tmp_python = tmp.join("bin/python");
    run(
        Command::new(&tmp_python)
            .args([
                "-m",
                "pip",
                "install",
                "--no-input",
                "--disable-pip-version-check",
            ])
            // Wheels only: nothing is compiled, and each package carries its own HDF5.
            .arg("--only-binary=:all:")
            .args(sdists.iter().map(|p| format!("--no-binary={p}")))
            // Fail in about a minute, not pip's configured minutes, without the network.
            .args(["--timeout", "20", "--retries", "2"])
            .arg("-r")
            .arg(req_path)
            .args(wheels)
            .env("PIP_NO_INPUT", "1"),
        &format!(
            "pip could not install the pinned wheels of {} from PyPI (is PyPI reachable? \
             this test needs it once, to create {})",
            req_path.display(),
            venv.display()
        ),
    );
    run(
        Command::new(&tmp_python).args(["-c", check]),
        "the installed wheels do not import",
    );
    if std::fs::rename(&tmp, &venv).is_ok() {
        unfinished.0 = None;
    } else {
        // Another process created it first (`unfinished` removes ours).
        assert!(python.exists(), "could not create {}", venv.display());
    }
    // Environments of older pins are not used any more.
    for e in std::fs::read_dir(&root).into_iter().flatten().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name != key && !name.starts_with(".tmp-") {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
    python
}

/// The `h5prov` wheel (manylinux2014) that `scripts/build-wheel.sh` builds, once per
/// source tree: the script caches it under `target/wheels/<hash of the sources>/` (a fresh
/// build takes minutes: a release build of the analyzer and the plugin with zig as the
/// linker), and checks its manylinux tag with `auditwheel show`.
pub fn h5prov_wheel() -> PathBuf {
    static WHEEL: OnceLock<PathBuf> = OnceLock::new();
    WHEEL
        .get_or_init(|| {
            let mut cmd = Command::new("bash");
            cmd.arg(repo().join("scripts/build-wheel.sh"));
            // The script's cargo builds its own target directory with its own flags.
            for (k, _) in std::env::vars_os() {
                let k = k.to_string_lossy();
                if k.starts_with("CARGO_") || k == "RUSTFLAGS" {
                    cmd.env_remove(&*k);
                }
            }
            let desc = format!("{cmd:?}");
            let out = cmd.output().unwrap_or_else(|e| panic!("{desc}: {e}"));
            assert!(
                out.status.success(),
                "building the wheel: {}",
                describe_output(&desc, &out)
            );
            let path = String::from_utf8(out.stdout).unwrap();
            PathBuf::from(path.trim())
        })
        .clone()
}

/// The pinned packages a Python user of the wheel installs next to it,
/// `tests/python/user-requirements.txt` (h5py, netCDF4, pyarrow, pandas, nbclient, ...).
pub fn user_requirements() -> PathBuf {
    repo().join("tests/python/user-requirements.txt")
}

/// The Python interpreter of a virtual environment where the built wheel
/// ([`h5prov_wheel`]) and [`user_requirements`] were installed with pip, as a user
/// would: made like [`wheels_python`]'s under `target/py-user-venv/<key>`, the key
/// hashing the wheel too.
pub fn user_python() -> PathBuf {
    static PY: OnceLock<PathBuf> = OnceLock::new();
    PY.get_or_init(|| {
        create_venv_with(
            &user_requirements(),
            &[h5prov_wheel()],
            "py-user-venv",
            &[],
            "import h5prov, h5py, netCDF4, pyarrow, pandas, nbclient",
        )
    })
    .clone()
}

/// Removes a directory when dropped (also when a failed assertion unwinds), unless its
/// path was taken out.
struct RemoveOnDrop(Option<PathBuf>);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        if let Some(d) = self.0.take() {
            let _ = std::fs::remove_dir_all(d);
        }
    }
}

/// 64-bit FNV-1a: a hash that is the same in every build (std's is not promised to be).
fn fnv1a64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// Files below `dir` (recursively) whose names end with `suffix`, sorted.
pub fn files_with_suffix(dir: &Path, suffix: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.to_string_lossy().ends_with(suffix) {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// A file's bytes, decompressed when its name ends with `.zst` (the default binary
/// traces, `*.trace.bin.zst`: one zstd frame a block).
pub fn read_maybe_zst(f: &Path) -> Vec<u8> {
    let mut data = Vec::new();
    h5prov_format::open_bin_stream(f)
        .and_then(|mut r| std::io::Read::read_to_end(&mut r, &mut data))
        .unwrap_or_else(|e| panic!("{}: {e}", f.display()));
    data
}

/// The records of a complete binary trace file (the format crate's reader; any flaw
/// panics).
pub fn read_bin_trace(f: &Path) -> Vec<h5prov_format::TraceRecord> {
    use h5prov_format::TraceRecordRef;
    let mut out = Vec::new();
    h5prov_format::read_bin_file(f, TraceRecordRef::bin_decoder, |h, vals| {
        out.push(TraceRecordRef::from_bin(h, vals)?.to_owned_record());
        Ok(())
    })
    .unwrap_or_else(|e| panic!("{e}"));
    out
}

/// The rows of a complete binary objects file (the format crate's reader; any flaw
/// panics).
pub fn read_bin_objects(f: &Path) -> Vec<h5prov_format::ObjectSummary> {
    use h5prov_format::ObjectSummaryRef;
    let mut out = Vec::new();
    h5prov_format::read_bin_file(f, ObjectSummaryRef::bin_decoder, |h, vals| {
        out.push(ObjectSummaryRef::from_bin(h, vals)?.to_owned_record());
        Ok(())
    })
    .unwrap_or_else(|e| panic!("{e}"));
    out
}

/// All trace records below `dir` (CSV, JSONL or binary).
pub fn read_records(dir: &Path) -> Vec<h5prov_format::TraceRecord> {
    let mut recs = Vec::new();
    for ext in [".trace.bin", ".trace.bin.zst"] {
        for f in files_with_suffix(dir, ext) {
            recs.extend(read_bin_trace(&f));
        }
    }
    for f in files_with_suffix(dir, ".trace.csv") {
        let mut rd = csv::Reader::from_path(&f).unwrap();
        for r in rd.deserialize() {
            recs.push(r.unwrap_or_else(|e| panic!("{}: {e}", f.display())));
        }
    }
    for f in files_with_suffix(dir, ".trace.jsonl") {
        for (i, line) in std::fs::read_to_string(&f).unwrap().lines().enumerate() {
            recs.push(
                serde_json::from_str(line)
                    .unwrap_or_else(|e| panic!("{}:{}: {e}", f.display(), i + 1)),
            );
        }
    }
    recs
}

/// All object summary rows below `dir` (CSV, JSONL or binary).
pub fn read_objects(dir: &Path) -> Vec<h5prov_format::ObjectSummary> {
    let mut rows = Vec::new();
    for ext in [".objects.bin", ".objects.bin.zst"] {
        for f in files_with_suffix(dir, ext) {
            rows.extend(read_bin_objects(&f));
        }
    }
    for f in files_with_suffix(dir, ".objects.csv") {
        let mut rd = csv::Reader::from_path(&f).unwrap();
        for r in rd.deserialize() {
            rows.push(r.unwrap_or_else(|e| panic!("{}: {e}", f.display())));
        }
    }
    for f in files_with_suffix(dir, ".objects.jsonl") {
        for line in std::fs::read_to_string(&f).unwrap().lines() {
            rows.push(serde_json::from_str(line).unwrap());
        }
    }
    rows
}

/// The metadata records below `dir`.
pub fn read_metas(dir: &Path) -> Vec<h5prov_format::ProcessMeta> {
    files_with_suffix(dir, ".meta.json")
        .iter()
        .map(|f| serde_json::from_str(&std::fs::read_to_string(f).unwrap()).unwrap())
        .collect()
}

/// The workloads of `workloads/` compiled against the same HDF5 (once per test binary).
pub fn workload(name: &str) -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    let dir = BUILT.get_or_init(|| {
        let out = tmp_root().join(format!("workloads-{}", std::process::id()));
        let st = Command::new("sh")
            .arg(repo().join("workloads/build.sh"))
            .arg(&out)
            .env("HDF5_DIR", hdf5_dir())
            .output()
            .expect("run workloads/build.sh");
        assert!(
            st.status.success(),
            "workloads/build.sh failed:\n{}",
            String::from_utf8_lossy(&st.stderr)
        );
        out
    });
    dir.join(name)
}

/// The analyzer binary of the same profile.
pub fn analyzer() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let p = exe.parent().unwrap().parent().unwrap().join("h5prov");
    assert!(
        p.exists(),
        "{} is missing: cargo build -p h5prov-analyzer",
        p.display()
    );
    p
}

/// `h5prov ARGS` (the analyzer of the same profile), whatever its status.
pub fn h5prov_cmd(args: &[&str]) -> Output {
    let mut cmd = Command::new(analyzer());
    cmd.args(args);
    let desc = format!("{cmd:?}");
    cmd.output().unwrap_or_else(|e| panic!("{desc}: {e}"))
}

/// `h5prov ARGS`, which must succeed; its stdout.
pub fn h5prov_ok(args: &[&str]) -> Vec<u8> {
    let out = h5prov_cmd(args);
    assert!(
        out.status.success(),
        "{}",
        describe_output(&format!("h5prov {}", args.join(" ")), &out)
    );
    out.stdout
}

/// Kills a child process when dropped, so a failed assertion leaves no collector or server
/// running.
pub struct KillOnDrop(pub std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `h5prov collect --listen LISTEN --metrics 127.0.0.1:0 EXTRA...`: (the process,
/// the stream address and the metrics address it prints; port 0 is the one it got).
pub fn start_collector(listen: &str, extra: &[&std::ffi::OsStr]) -> (KillOnDrop, String, String) {
    let mut cmd = Command::new(analyzer());
    cmd.args(["collect", "--listen", listen, "--metrics", "127.0.0.1:0"])
        .args(extra);
    spawn_collector(cmd)
}

/// Spawns `cmd`, an `h5prov collect` command line (perhaps behind `setpriv` or the like),
/// and reads the `listen ADDR` and `metrics ADDR` lines it prints: (the process, the stream
/// address, the metrics address).
pub fn spawn_collector(mut cmd: Command) -> (KillOnDrop, String, String) {
    use std::io::{BufRead, BufReader};
    let mut child = cmd
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("start h5prov collect");
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut next = |prefix: &str| {
        let l = lines
            .next()
            .expect("the collector printed nothing")
            .unwrap();
        l.strip_prefix(prefix)
            .unwrap_or_else(|| panic!("h5prov collect printed {l:?}, not {prefix}ADDR"))
            .to_string()
    };
    let (listen, metrics) = (next("listen "), next("metrics "));
    // Keep reading its stdout so that it never blocks on a full pipe.
    std::thread::spawn(move || for _ in lines {});
    (KillOnDrop(child), listen, metrics)
}

/// The `sample` workload traced with the connector options `opts` (a `stream=` among
/// them), as job `job_id` (`SLURM_JOB_ID`) in `dir/<job_id>`: (trace records, stream
/// messages sent, dropped), the last two from the processes' metadata. Proves h5prov was
/// loaded (records exist).
pub fn streamed_job(dir: &Path, opts: &str, job_id: &str) -> (u64, u64, u64) {
    let (data, traces) = (
        dir.join(job_id).join("data"),
        dir.join(job_id).join("traces"),
    );
    std::fs::create_dir_all(&data).unwrap();
    Run::with_h5prov(&workload("sample"), &["-d", "."], &data, &traces, opts)
        .env("SLURM_JOB_ID", job_id)
        .ok();
    let n = read_records(&traces).len() as u64;
    assert!(n > 0, "no trace records: h5prov was not loaded");
    let metas = read_metas(&traces);
    let sent = metas.iter().map(|m| m.stream_sent.unwrap_or(0)).sum();
    let dropped = metas.iter().map(|m| m.stream_dropped.unwrap_or(0)).sum();
    (n, sent, dropped)
}

/// The value of the collector metric `name` (with its labels, if any) in a `/metrics` text.
pub fn metric_value(text: &str, name: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
}

/// `event` messages in the `h5prov collect --out` files under `dir`.
pub fn captured_events(dir: &Path) -> u64 {
    files_with_suffix(dir, ".jsonl")
        .iter()
        .map(|f| {
            std::fs::read_to_string(f)
                .unwrap()
                .lines()
                .filter(|l| l.contains("\"type\":\"event\""))
                .count() as u64
        })
        .sum()
}

/// The parallel HDF5 the MPI tests build against (`.deps/hdf5-parallel`).
pub fn parallel_hdf5() -> PathBuf {
    let p = repo().join(".deps/hdf5-parallel");
    std::fs::canonicalize(&p).unwrap_or_else(|e| {
        panic!(
            "parallel HDF5 not found at {} ({e}): run `cargo run -p hdf5-test-harness -- \
             build-hdf5 --variant parallel`",
            p.display()
        )
    })
}

/// Runs `exe args` under `mpirun -np ranks` in `dir` against the parallel HDF5, natively
/// (`conn` None) or with h5prov loaded through `HDF5_VOL_CONNECTOR=conn`.
pub fn mpirun(exe: &Path, ranks: usize, args: &[&str], dir: &Path, conn: Option<&str>) -> Output {
    let mut c = Command::new("mpirun");
    // The parallel HDF5 first: the scripts export the serial one's LD_LIBRARY_PATH, which
    // takes precedence over the program's RUNPATH.
    let lib = parallel_hdf5().join("lib");
    c.args([
        "-np",
        &ranks.to_string(),
        "--oversubscribe",
        "-x",
        "LD_LIBRARY_PATH",
    ])
    .current_dir(dir)
    .env("LD_LIBRARY_PATH", &lib)
    .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
    .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    .env_remove("HDF5_VOL_CONNECTOR")
    .env_remove("HDF5_PLUGIN_PATH");
    if let Some(conn) = conn {
        c.env("HDF5_PLUGIN_PATH", plugin_dir())
            .env("HDF5_VOL_CONNECTOR", conn)
            .args(["-x", "HDF5_PLUGIN_PATH", "-x", "HDF5_VOL_CONNECTOR"]);
    }
    c.arg(exe).args(args);
    c.output().expect("run mpirun")
}

/// One insight of `h5prov report --json`: `(code, level)`, e.g. `("small_io", "WARN")`.
pub type Found = (String, String);

/// An MPI fixture run has the fixtures of this test process to itself, whichever test (and
/// test file) asks: serial runs share (read), an MPI run excludes every other run (write).
/// Four oversubscribed ranks on a two-core machine next to another fixture's processes
/// measure the scheduler, not the program: a descheduled rank makes the others wait at
/// the collective file close, which reads as rank imbalance.
static FIXTURE_RUNS: std::sync::RwLock<()> = std::sync::RwLock::new(());

/// Runs `tests/c/insights/<name>.c` with h5prov (`level=dataset`) and returns the insights
/// `h5prov report --json` gives on its traces, sorted. `ranks` `None` runs the serial build
/// against the workspace's HDF5; `Some(n)` builds it with `mpicc` against the parallel
/// HDF5 (with `-DFIXTURE_MPI`) and runs it under `mpirun -np n`, with no other fixture
/// running in this test process. The program runs in a fresh scratch directory (its cwd) and gets
/// `args`; the run must succeed and leave traces, which proves h5prov was loaded. `report_args` go to the analyzer (thresholds,
/// `--stripe-size`, ...).
pub fn insights_of(
    name: &str,
    args: &[&str],
    ranks: Option<usize>,
    report_args: &[&str],
) -> Vec<Found> {
    let v = report_of(name, args, ranks, report_args);
    let mut found: Vec<Found> = v["insights"]
        .as_array()
        .expect("insights array")
        .iter()
        .map(|i| {
            (
                i["code"].as_str().unwrap_or_default().to_string(),
                i["level"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    found.sort();
    // Every finding a fixture gives is documented: a `## ` heading of docs/INSIGHTS.md
    // names its code.
    let docs = std::fs::read_to_string(repo().join("docs/INSIGHTS.md")).expect("docs/INSIGHTS.md");
    for (code, _) in &found {
        assert!(
            docs.lines()
                .any(|l| l.starts_with("## ") && l.contains(&format!("`{code}`"))),
            "insight `{code}` has no section in docs/INSIGHTS.md"
        );
    }
    found
}

/// Runs `tests/c/insights/<name>.c` with h5prov as [`insights_of`] does and returns the
/// whole `h5prov report --json` of its traces.
pub fn report_of(
    name: &str,
    args: &[&str],
    ranks: Option<usize>,
    report_args: &[&str],
) -> serde_json::Value {
    // The serial and the MPI build of one fixture may run at once: each its own directory.
    let dir = scratch(&format!(
        "insights-{name}{}-{}",
        ranks.map_or(String::new(), |n| format!("-np{n}")),
        args.join("_").replace(['/', ' '], "_")
    ));
    let traces = dir.join("traces");
    let work = dir.join("work");
    std::fs::create_dir_all(&traces).unwrap();
    std::fs::create_dir_all(&work).unwrap();
    let src = format!("insights/{name}");
    match ranks {
        None => {
            let exe = c_program(&src);
            let _shared = FIXTURE_RUNS.read().unwrap_or_else(|e| e.into_inner());
            Run::with_h5prov(&exe, args, &work, &traces, "level=dataset").ok();
        }
        Some(n) => {
            let exe = insight_mpi_program(&src);
            let _alone = FIXTURE_RUNS.write().unwrap_or_else(|e| e.into_inner());
            let conn = format!(
                "h5prov under_vol=0;under_info={{}};path={};level=dataset",
                traces.display()
            );
            let out = mpirun(&exe, n, args, &work, Some(&conn));
            assert!(
                out.status.success(),
                "{}",
                describe_output(&format!("mpirun {name}"), &out)
            );
        }
    }
    assert!(
        !files_with_suffix(&traces, ".meta.json").is_empty(),
        "{name} {args:?}: no traces in {}: h5prov was not loaded",
        traces.display()
    );
    // The program's HDF5 file is not needed any more (up to 128 MiB, for the planted-problem
    // suite's 37 problems, their fixes and the controls, three runs each); the traces stay.
    let _ = std::fs::remove_dir_all(&work);
    let out = Command::new(analyzer())
        .arg("report")
        .arg("--json")
        .args(report_args)
        .arg(&traces)
        .output()
        .expect("run h5prov report");
    assert!(
        out.status.success(),
        "{}",
        describe_output("h5prov report", &out)
    );
    serde_json::from_slice(&out.stdout).expect("report JSON")
}

/// Compiles `tests/c/<name>.c` with `mpicc -DFIXTURE_MPI` against the parallel HDF5
/// (once per test process).
fn insight_mpi_program(name: &str) -> PathBuf {
    static BUILT: std::sync::Mutex<Vec<(String, PathBuf)>> = std::sync::Mutex::new(Vec::new());
    let mut built = BUILT.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, p)) = built.iter().find(|(n, _)| n == name) {
        return p.clone();
    }
    // -D after the source still applies: gcc reads every option before compiling.
    let exe = compile_c("mpicc", name, Some(&parallel_hdf5()), &["-DFIXTURE_MPI"]);
    built.push((name.to_string(), exe.clone()));
    exe
}

/// Whether `found` has `code` at one of `levels` (`["WARN", "HIGH"]`, ...).
pub fn fires(found: &[Found], code: &str, levels: &[&str]) -> bool {
    found
        .iter()
        .any(|(c, l)| c == code && levels.contains(&l.as_str()))
}

/// The launcher variables a job id can come from (the connector's `launcher_job_id`):
/// tests clear them in every run, so only the one a test sets counts, whatever launcher
/// runs the test suite.
pub const JOB_VARS: &[&str] = &[
    "SLURM_JOB_ID",
    "PBS_JOBID",
    "LSB_JOBID",
    "COBALT_JOBID",
    "FLUX_JOB_ID",
    "PMIX_NAMESPACE",
    "OMPI_MCA_orte_ess_jobid",
    "OMPI_MCA_ess_base_jobid",
];

// Prometheus and plain HTTP, for the collector's tests (stream.rs, collector_service.rs).

/// A free loopback TCP port (bound and released).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A plain HTTP/1.1 GET: (status line, body).
pub fn http_get(addr: &str, path: &str) -> Option<(String, String)> {
    let mut s = TcpStream::connect(addr).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut resp = Vec::new();
    s.read_to_end(&mut resp).ok()?;
    let text = String::from_utf8_lossy(&resp).into_owned();
    let (head, body) = text.split_once("\r\n\r\n")?;
    let body = if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        dechunk(body)
    } else {
        body.to_string()
    };
    Some((head.lines().next()?.to_string(), body))
}

/// The body of a chunked response.
fn dechunk(mut s: &str) -> String {
    let mut out = String::new();
    while let Some((len, rest)) = s.split_once("\r\n") {
        let n = usize::from_str_radix(len.trim(), 16).unwrap_or(0);
        if n == 0 || rest.len() < n {
            break;
        }
        out.push_str(&rest[..n]);
        s = rest[n..].trim_start_matches("\r\n");
    }
    out
}

/// Percent-encodes a query parameter.
fn urlencode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// Debian's Prometheus scraping `target` every second, on a free loopback port:
/// (guard, its HTTP address), once it has scraped `target` successfully.
pub fn prometheus(dir: &Path, target: &str) -> (KillOnDrop, String) {
    prometheus_with_token(dir, target, None)
}

/// [`prometheus`], sending the token in `token_file` as `Authorization: Bearer` to the
/// target when given (the collector's `--token-file`).
pub fn prometheus_with_token(
    dir: &Path,
    target: &str,
    token_file: Option<&Path>,
) -> (KillOnDrop, String) {
    prometheus_with_auth(dir, target, token_file, None)
}

/// [`prometheus_with_token`], scraping over TLS (`scheme: https`) and trusting only the
/// PEM CA `tls_ca` when given (the collector's `--tls-cert`).
pub fn prometheus_with_auth(
    dir: &Path,
    target: &str,
    token_file: Option<&Path>,
    tls_ca: Option<&Path>,
) -> (KillOnDrop, String) {
    let bin = which("prometheus").expect(
        "Debian's `prometheus` is not installed (apt-get install prometheus; scripts/test.sh does)",
    );
    let port = free_port();
    let cfg = dir.join("prometheus.yml");
    std::fs::write(
        &cfg,
        format!(
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 900ms\n  evaluation_interval: 1s\n\
             scrape_configs:\n  - job_name: h5prov\n    static_configs:\n      - targets: ['{target}']\n{}",
            token_file.map_or(String::new(), |f| format!(
                "    authorization:\n      type: Bearer\n      credentials_file: {}\n",
                f.display()
            )) + &tls_ca.map_or(String::new(), |f| format!(
                "    scheme: https\n    tls_config:\n      ca_file: {}\n",
                f.display()
            ))
        ),
    )
    .unwrap();
    let addr = format!("127.0.0.1:{port}");
    let child = Command::new(bin)
        .arg(format!("--config.file={}", cfg.display()))
        .arg(format!(
            "--storage.tsdb.path={}",
            dir.join("tsdb").display()
        ))
        .arg(format!("--web.listen-address={addr}"))
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(dir.join("prometheus.log")).unwrap())
        .spawn()
        .expect("start prometheus");
    let guard = KillOnDrop(child);
    let t0 = Instant::now();
    while !http_get(&addr, "/-/ready").is_some_and(|(st, _)| st.contains(" 200")) {
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "prometheus not ready: {}",
            std::fs::read_to_string(dir.join("prometheus.log")).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    // Ready is not scraping: wait for the first successful scrape of the collector, so
    // that a short job is not over before Prometheus looks.
    let t0 = Instant::now();
    while promql(&addr, r#"up{job="h5prov"}"#)
        .first()
        .is_none_or(|(_, v)| *v < 1.0)
    {
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "prometheus never scraped the collector: {}",
            std::fs::read_to_string(dir.join("prometheus.log")).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    (guard, addr)
}

/// `name` on `PATH` (or in /usr/bin).
pub fn which(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH")?
        .to_str()?
        .split(':')
        .map(|d| Path::new(d).join(name))
        .chain([PathBuf::from("/usr/bin").join(name)])
        .find(|p| p.is_file())
}

/// A PromQL instant query through Prometheus's HTTP API: the vector's (labels, value)
/// pairs.
pub fn promql(addr: &str, q: &str) -> Vec<(BTreeMap<String, String>, f64)> {
    let (st, body) = http_get(addr, &format!("/api/v1/query?query={}", urlencode(q)))
        .unwrap_or_else(|| panic!("query {q}: no answer"));
    assert!(st.contains(" 200"), "query {q}: {st}\n{body}");
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["status"], "success", "{body}");
    v["data"]["result"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let labels = r["metric"]
                .as_object()
                .unwrap()
                .iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap_or("").to_string()))
                .collect();
            let val = r["value"][1].as_str().unwrap().parse::<f64>().unwrap();
            (labels, val)
        })
        .collect()
}

/// The first value of a PromQL query, 0 when it is empty.
pub fn scalar(addr: &str, q: &str) -> f64 {
    promql(addr, q).first().map_or(0.0, |(_, v)| *v)
}

/// Whether the peer closed `s` within `secs` (a read gives end of stream or a reset); `s`
/// needs a short read timeout of its own, so that the wait can end.
pub fn closed_by_peer(s: &mut impl std::io::Read, secs: u64) -> bool {
    let t0 = Instant::now();
    let mut b = [0u8; 64];
    while t0.elapsed() < Duration::from_secs(secs) {
        match s.read(&mut b) {
            Ok(0) => return true,
            Ok(_) => {}
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(_) => return true,
        }
    }
    false
}

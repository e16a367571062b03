//! Helpers for h5prov's integration tests: real HDF5 programs (the installed tools and small
//! C programs compiled against the same HDF5) run with the real `libh5prov.so` loaded.
//!
//! Every test that claims to exercise h5prov proves it was loaded: HDF5 silently falls back
//! to the native connector when a named connector cannot be loaded. [`Run::with_h5prov`]
//! checks that the process wrote its h5prov metadata record.
#![forbid(unsafe_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

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
    let exe = std::env::current_exe().unwrap();
    let target = exe.ancestors().nth(3).unwrap().to_path_buf();
    target.join("tmp").join("h5prov-tests")
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
        .zip(src.metadata().and_then(|m| m.modified()).ok())
        .is_some_and(|(e, s)| e >= s);
    if !fresh {
        let h = hdf5_dir();
        let tmp = out_dir.join(format!("{name}.{}.tmp", std::process::id()));
        let out = Command::new("cc")
            .arg("-std=c99")
            .arg("-Wall")
            .arg("-Werror")
            .arg("-o")
            .arg(&tmp)
            .arg(&src)
            .arg(format!("-I{}", h.join("include").display()))
            .arg(format!("-L{}", h.join("lib").display()))
            .arg(format!("-Wl,-rpath,{}", h.join("lib").display()))
            .arg("-lhdf5")
            .output()
            .expect("run cc");
        assert!(
            out.status.success(),
            "compiling {}:\n{}",
            src.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        std::fs::rename(&tmp, &exe).unwrap();
    }
    exe
}

/// A fresh scratch directory.
pub fn scratch(name: &str) -> PathBuf {
    let d = tmp_root()
        .join("scratch")
        .join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// One program run, with or without h5prov.
pub struct Run {
    cmd: Command,
    desc: String,
    traces: Option<PathBuf>,
}

impl Run {
    /// Runs `program` with `args` in `cwd`, natively (no VOL connector variable).
    pub fn native(program: &Path, args: &[&str], cwd: &Path) -> Run {
        let mut cmd = Command::new(program);
        cmd.args(args)
            .current_dir(cwd)
            .env_remove("HDF5_VOL_CONNECTOR")
            .env_remove("HDF5_PLUGIN_PATH")
            .env("LD_LIBRARY_PATH", hdf5_dir().join("lib"));
        Run {
            cmd,
            desc: format!("{} {}", program.display(), args.join(" ")),
            traces: None,
        }
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
        let mut r = Run::native(program, args, cwd);
        let conn = format!(
            "h5prov under_vol=0;under_info={{}};path={}{}{}",
            traces.display(),
            if options.is_empty() { "" } else { ";" },
            options
        );
        r.cmd
            .env("HDF5_PLUGIN_PATH", plugin_dir())
            .env("HDF5_VOL_CONNECTOR", &conn);
        r.desc = format!("HDF5_VOL_CONNECTOR='{conn}' {}", r.desc);
        r.traces = Some(traces.to_path_buf());
        r
    }

    /// Runs with a raw `HDF5_VOL_CONNECTOR` value (no proof of loading).
    pub fn with_connector(program: &Path, args: &[&str], cwd: &Path, conn: &str) -> Run {
        let mut r = Run::native(program, args, cwd);
        r.cmd
            .env("HDF5_PLUGIN_PATH", plugin_dir())
            .env("HDF5_VOL_CONNECTOR", conn);
        r.desc = format!("HDF5_VOL_CONNECTOR='{conn}' {}", r.desc);
        r
    }

    /// Sets an environment variable.
    pub fn env(mut self, k: &str, v: &str) -> Run {
        self.cmd.env(k, v);
        self.desc = format!("{k}={v} {}", self.desc);
        self
    }

    /// Runs and returns the output, whatever the status.
    pub fn output(mut self) -> Output {
        let out = self
            .cmd
            .output()
            .unwrap_or_else(|e| panic!("{}: {e}", self.desc));
        if let Some(t) = &self.traces {
            let metas = files_with_suffix(t, ".meta.json");
            assert!(
                !metas.is_empty(),
                "h5prov was NOT loaded (no metadata record in {}): {}\nstatus {}\nstdout:\n{}\nstderr:\n{}",
                t.display(),
                self.desc,
                out.status,
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        out
    }

    /// Runs and requires success; returns stdout.
    pub fn ok(self) -> String {
        let desc = self.desc.clone();
        let out = self.output();
        assert!(
            out.status.success(),
            "command failed: {desc}\nstatus {}\nstdout:\n{}\nstderr:\n{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
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

/// All trace records below `dir` (CSV or JSONL).
pub fn read_records(dir: &Path) -> Vec<h5prov_format::TraceRecord> {
    let mut recs = Vec::new();
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

/// All object summary rows below `dir` (CSV or JSONL).
pub fn read_objects(dir: &Path) -> Vec<h5prov_format::ObjectSummary> {
    let mut rows = Vec::new();
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

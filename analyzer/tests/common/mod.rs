//! Test helpers: a CLI runner that prints everything on failure (after xsv's `workdir.rs`)
//! and committed-file snapshots.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The analyzer package directory (integration tests run with it as the working directory).
pub fn pkg_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A finished command with everything needed to explain a failure.
pub struct Run {
    pub cmd: String,
    pub cwd: PathBuf,
    pub out: Output,
}

impl Run {
    pub fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.out.stdout).into_owned()
    }
    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.out.stderr).into_owned()
    }
    pub fn code(&self) -> Option<i32> {
        self.out.status.code()
    }
    /// Everything about the run, for assertion messages.
    pub fn explain(&self) -> String {
        format!(
            "\n--- command: {}\n--- cwd: {}\n--- status: {}\n--- stdout:\n{}\n--- stderr:\n{}\n",
            self.cmd,
            self.cwd.display(),
            self.out.status,
            self.stdout(),
            self.stderr()
        )
    }
    /// Asserts the exit code, printing the whole run when it differs.
    pub fn expect_code(&self, code: i32) -> &Self {
        assert_eq!(
            self.code(),
            Some(code),
            "unexpected exit status{}",
            self.explain()
        );
        self
    }
    /// Asserts that stderr contains `s`.
    pub fn expect_stderr(&self, s: &str) -> &Self {
        assert!(
            self.stderr().contains(s),
            "stderr lacks {s:?}{}",
            self.explain()
        );
        self
    }
    /// Asserts that stdout contains `s`.
    pub fn expect_stdout(&self, s: &str) -> &Self {
        assert!(
            self.stdout().contains(s),
            "stdout lacks {s:?}{}",
            self.explain()
        );
        self
    }
}

/// Runs the `h5prov` binary in the package directory with `NO_COLOR` set.
pub fn h5prov(args: &[&str]) -> Run {
    let cwd = pkg_dir();
    let bin = env!("CARGO_BIN_EXE_h5prov");
    let out = Command::new(bin)
        .args(args)
        .current_dir(&cwd)
        .env("NO_COLOR", "1")
        .output()
        .expect("run h5prov");
    Run {
        cmd: format!("{bin} {}", args.join(" ")),
        cwd,
        out,
    }
}

/// Compares `actual` with `tests/expected/<name>`. `H5PROV_BLESS=1` rewrites the file; a
/// difference writes `<name>.new` next to it and fails with the first differing line.
/// The checkout's absolute path is replaced by `$ROOT` so snapshots hold in any clone.
pub fn snapshot(name: &str, actual: &str) {
    let root = pkg_dir()
        .parent()
        .expect("workspace root")
        .display()
        .to_string();
    let actual = actual.replace(&root, "$ROOT");
    let actual = actual.as_str();
    let path = pkg_dir().join("tests/expected").join(name);
    if std::env::var_os("H5PROV_BLESS").is_some_and(|v| v == "1") {
        std::fs::write(&path, actual).expect("write snapshot");
        return;
    }
    let expected = match std::fs::read_to_string(&path) {
        Ok(s) => s,
        Err(_) => {
            std::fs::write(new_path(&path), actual).expect("write new snapshot");
            panic!(
                "missing snapshot {}; wrote .new (rerun with H5PROV_BLESS=1 to accept)",
                path.display()
            );
        }
    };
    if expected != actual {
        std::fs::write(new_path(&path), actual).expect("write new snapshot");
        let (line, e, a) = expected
            .lines()
            .zip(actual.lines())
            .enumerate()
            .find(|(_, (e, a))| e != a)
            .map(|(i, (e, a))| {
                let (e, a) = window(e, a);
                (i + 1, e, a)
            })
            .unwrap_or((
                expected.lines().count().min(actual.lines().count()) + 1,
                "<end>".into(),
                "<end>".into(),
            ));
        panic!(
            "snapshot {} differs at line {line}:\n  expected: {e}\n  actual:   {a}\n(actual written to {}.new; H5PROV_BLESS=1 accepts)",
            path.display(),
            path.display()
        );
    }
}

/// The part of two differing lines around their first difference (long lines, such as the
/// one-line HTML report, would flood the test output).
fn window(e: &str, a: &str) -> (String, String) {
    let at = e
        .char_indices()
        .zip(a.chars())
        .find(|((_, x), y)| x != y)
        .map_or(e.len().min(a.len()), |((i, _), _)| i);
    let floor = |s: &str, mut i: usize| {
        i = i.min(s.len());
        while !s.is_char_boundary(i) {
            i -= 1;
        }
        i
    };
    let cut = |s: &str| -> String {
        let from = floor(s, at.saturating_sub(80));
        let to = floor(s, at + 120);
        format!(
            "{}{}{}",
            if from > 0 { "…" } else { "" },
            &s[from..to],
            if to < s.len() { "…" } else { "" }
        )
    };
    (cut(e), cut(a))
}

fn new_path(p: &Path) -> PathBuf {
    let mut s = p.as_os_str().to_owned();
    s.push(".new");
    PathBuf::from(s)
}

/// A fresh temporary directory under the target dir (no extra crate needed).
pub fn tempdir(name: &str) -> PathBuf {
    let base = std::env::temp_dir().join(format!("h5prov-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    std::fs::create_dir_all(&base).expect("create temp dir");
    base
}

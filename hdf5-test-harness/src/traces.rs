//! The traces h5prov leaves behind while HDF5's suites run through it.
//!
//! Every traced test process writes its files into the mode's trace directory: `path=` of
//! the connector string, or `./h5prov-traces` below the test's working directory. Six modes
//! of HDF5's suites wrote about 20 GB that way (one `set_extent` trace at `level=element`
//! alone was 5.3 GB), enough to fill a CI machine's disk. So the runner sweeps them: it reads
//! each process's `*.meta.json` into a [`TraceTally`] (processes, records, bytes, records
//! dropped, trace write errors), which is saved with the suite's results, and removes the
//! files unless asked to keep them. A trace write error is reported as an error of the
//! suite: h5prov must be able to write its traces wherever HDF5's tests run.

use crate::error::{Context, Result};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// h5prov's default trace directory, relative to the working directory.
pub const DEFAULT_TRACE_DIR: &str = "h5prov-traces";

/// What the traced processes of one suite wrote.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TraceTally {
    /// Processes with a metadata record.
    pub processes: u64,
    /// Processes whose metadata has no end time (killed, or exited without closing HDF5).
    pub unfinished: u64,
    /// Records the processes emitted.
    pub records: u64,
    /// Bytes written to trace files.
    pub bytes: u64,
    /// Records dropped (`max_size` reached, or a write error).
    pub dropped: u64,
    /// Trace write errors the processes counted.
    pub write_errors: u64,
    /// Metadata records that could not be read, as `file: reason`.
    #[serde(default)]
    pub unreadable: Vec<String>,
}

impl TraceTally {
    /// Adds one process's metadata record (the JSON text of a `*.meta.json`).
    pub fn add_meta(&mut self, file: &Path, text: &str) {
        if text.trim().is_empty() {
            // Killed while rewriting its record at exit.
            self.processes += 1;
            self.unfinished += 1;
            return;
        }
        let v: serde_json::Value = match serde_json::from_str(text.trim()) {
            Ok(v) => v,
            Err(e) => {
                self.unreadable.push(format!("{}: {e}", file.display()));
                return;
            }
        };
        let n = |k: &str| v.get(k).and_then(serde_json::Value::as_u64).unwrap_or(0);
        self.processes += 1;
        self.records += n("records");
        self.bytes += n("bytes_written");
        self.dropped += n("dropped");
        self.write_errors += n("write_errors");
        if v.get("end_ns").is_none_or(serde_json::Value::is_null) {
            self.unfinished += 1;
        }
    }

    /// Adds another tally.
    pub fn merge(&mut self, o: TraceTally) {
        self.processes += o.processes;
        self.unfinished += o.unfinished;
        self.records += o.records;
        self.bytes += o.bytes;
        self.dropped += o.dropped;
        self.write_errors += o.write_errors;
        self.unreadable.extend(o.unreadable);
    }

    /// One line for the console.
    pub fn line(&self, removed: bool) -> String {
        format!(
            "traces: {} processes ({} unfinished, {} unreadable), {} records, {:.1} MB, {} dropped, {} write errors{}",
            self.processes,
            self.unfinished,
            self.unreadable.len(),
            self.records,
            self.bytes as f64 / 1e6,
            self.dropped,
            self.write_errors,
            if removed {
                " (removed after counting; --keep-traces keeps them)"
            } else {
                ""
            }
        )
    }

    /// Problems worth failing the suite for: trace write errors. (Unreadable metadata
    /// records are listed in the results but can come from a test killing its process.)
    pub fn errors(&self) -> Vec<String> {
        if self.write_errors > 0 {
            vec![format!(
                "h5prov counted {} trace write errors in this suite",
                self.write_errors
            )]
        } else {
            Vec::new()
        }
    }
}

/// The trace directory a connector string names: the value of its `path=` (in any nested
/// `under_info`), else [`DEFAULT_TRACE_DIR`].
pub fn trace_dir(connector: &str) -> PathBuf {
    let b = connector.as_bytes();
    let mut from = 0;
    while let Some(i) = connector[from..].find("path=").map(|i| i + from) {
        if i == 0 || matches!(b[i - 1], b';' | b'{' | b' ') {
            let rest = &connector[i + 5..];
            let end = rest.find([';', '}']).unwrap_or(rest.len());
            return normal(Path::new(rest[..end].trim()));
        }
        from = i + 5;
    }
    PathBuf::from(DEFAULT_TRACE_DIR)
}

/// `p` without `.` components (`./t` and `t` name the same directory).
fn normal(p: &Path) -> PathBuf {
    p.components()
        .filter(|c| !matches!(c, std::path::Component::CurDir))
        .collect()
}

/// Trace directories below `root`: `dir` itself when absolute, else every directory named
/// like `dir` at any depth of `root` (tests run in many working directories).
pub fn find_trace_dirs(root: &Path, dir: &Path) -> Vec<PathBuf> {
    if dir.is_absolute() {
        return if dir.is_dir() {
            vec![dir.to_path_buf()]
        } else {
            Vec::new()
        };
    }
    let Some(name) = dir.file_name() else {
        return Vec::new();
    };
    let mut found = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            // Not following symlinks: the build tree links to other trees.
            if !e.file_type().is_ok_and(|t| t.is_dir()) {
                continue;
            }
            let p = e.path();
            if p.file_name() == Some(name) && p.ends_with(dir) {
                found.push(p);
            } else {
                stack.push(p);
            }
        }
    }
    found.sort();
    found
}

/// Tallies the metadata records in the trace directory `dir` (and its `dirs=` fan-out)
/// and removes the directory unless `keep`.
pub fn sweep(dir: &Path, keep: bool) -> Result<TraceTally> {
    let mut tally = TraceTally::default();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let entries = std::fs::read_dir(&d).context(|| format!("reading {}", d.display()))?;
        for e in entries.flatten() {
            let p = e.path();
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push(p);
            } else if p.to_string_lossy().ends_with(".meta.json") {
                match std::fs::read_to_string(&p) {
                    Ok(text) => tally.add_meta(&p, &text),
                    Err(e) => tally.unreadable.push(format!("{}: {e}", p.display())),
                }
            }
        }
    }
    if !keep {
        std::fs::remove_dir_all(dir).context(|| format!("removing {}", dir.display()))?;
    }
    Ok(tally)
}

/// [`sweep`]s every trace directory [`find_trace_dirs`] finds below each of `roots`.
pub fn sweep_all(roots: &[&Path], dir: &Path, keep: bool) -> Result<TraceTally> {
    let mut tally = TraceTally::default();
    let mut seen = std::collections::BTreeSet::new();
    for root in roots {
        for d in find_trace_dirs(root, dir) {
            if seen.insert(d.clone()) {
                tally.merge(sweep(&d, keep)?);
            }
        }
    }
    Ok(tally)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_trace_dir_comes_from_path_at_any_depth() {
        assert_eq!(
            trace_dir("h5prov under_vol=0;under_info={}"),
            PathBuf::from("h5prov-traces")
        );
        assert_eq!(
            trace_dir("h5prov under_vol=0;under_info={};level=element;path=/t/x"),
            PathBuf::from("/t/x")
        );
        assert_eq!(
            trace_dir(
                "pass_through under_vol=416;under_info={under_vol=0;under_info={};path=./rel/t}"
            ),
            PathBuf::from("rel/t")
        );
        assert_eq!(
            trace_dir("h5prov under_vol=0;under_info={};subpath=no"),
            PathBuf::from("h5prov-traces")
        );
    }

    #[test]
    fn sweep_counts_every_process_then_removes() {
        let root = std::env::temp_dir().join(format!("h5prov-sweep-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let t = root.join("a/b/h5prov-traces");
        std::fs::create_dir_all(t.join("d0001")).unwrap();
        std::fs::write(
            t.join("p1.meta.json"),
            r#"{"records":10,"bytes_written":100,"dropped":2,"write_errors":0,"end_ns":5}"#,
        )
        .unwrap();
        std::fs::write(
            t.join("d0001/p2.meta.json"),
            r#"{"records":1,"bytes_written":7,"dropped":0,"write_errors":1}"#,
        )
        .unwrap();
        std::fs::write(t.join("p3.meta.json"), "{trunc").unwrap();
        std::fs::write(t.join("p4.meta.json"), "").unwrap();
        std::fs::write(t.join("p1.trace.csv"), "x").unwrap();
        let tally = sweep_all(&[&root], Path::new(DEFAULT_TRACE_DIR), false).unwrap();
        assert_eq!(
            (
                tally.processes,
                tally.unfinished,
                tally.records,
                tally.bytes
            ),
            (3, 2, 11, 107)
        );
        assert_eq!((tally.dropped, tally.write_errors), (2, 1));
        assert_eq!(tally.unreadable.len(), 1);
        assert_eq!(tally.errors().len(), 1, "write errors fail the suite");
        assert!(!t.exists(), "removed");
        assert!(root.join("a/b").is_dir(), "only the trace directory");
        std::fs::remove_dir_all(&root).unwrap();
    }
}

//! Parquet export (`h5prov export --parquet`) and reading one back (`h5prov report` of an
//! export directory).
//!
//! An export directory holds four tables, each a directory of Hive-style partitions
//! `job=<id>/` of Parquet files (Zstandard, dictionary-encoded columns):
//! - `records/`: one row per trace record, the trace-record table's columns plus the
//!   record's file and line;
//! - `objects/`: one row per object summary, plus its file;
//! - `processes/`: one row per process (its `meta.json`);
//! - `files/`: one row per file read, with what reading it found.
//!
//! The schemas are built from the format's record tables ([`schema`]); rows are encoded
//! with the encoder the format generates ([`h5prov_format::FieldSink`]) and decoded with
//! its one parser ([`h5prov_format::FieldSource`]). `docs/TRACE-FORMAT.md` § *Parquet
//! export* documents the tables, `docs/PARQUET.md` queries them.

pub mod commit;
mod read;
pub mod schema;
mod write;

pub use read::{job_bytes, jobs, lineage_rows, load, pick_job};
pub use write::{export_job, ExportStats};

use crate::read::{objects::read_meta_checked, Error, Inputs};
use std::path::{Path, PathBuf};

/// The partition directory of job `job` in table `table`.
pub fn job_dir(out: &Path, table: &str, job: &str) -> PathBuf {
    out.join(table).join(format!("job={job}"))
}

/// The first table partition of job `job` that already exists under `out`, or the staging
/// directory of the job if its export committed it but was killed before moving it all.
pub fn partition_exists(out: &Path, job: &str) -> Option<PathBuf> {
    schema::TABLES
        .iter()
        .map(|t| job_dir(out, t, job))
        .find(|p| p.exists())
        .or_else(|| commit::pending(out, job).then(|| commit::staging_dir(out, job)))
}

/// Whether `dir` is a Parquet export (it has the `records/` and `processes/` tables, or a
/// job committed into it whose tables are not all moved yet).
pub fn is_export(dir: &Path) -> bool {
    (dir.join("records").is_dir() && dir.join("processes").is_dir() && dir.join("files").is_dir())
        || !commit::pending_jobs(dir).is_empty()
}

/// A job id as a partition name: ASCII letters, digits, `.`, `_`, `-` and `+` kept, any
/// other character `_` (a PBS id `123.server` stays as it is; a PMIx namespace
/// `prterun-host-42@1` becomes `prterun-host-42_1`). Never empty, never `.` or `..`.
pub fn sanitize_job_id(id: &str) -> String {
    let s: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '+') {
                c
            } else {
                '_'
            }
        })
        .collect();
    match s.as_str() {
        "" | "." | ".." => format!("_{s}"),
        _ => s,
    }
}

/// 64-bit FNV-1a: a stable hash (the same in every build and version, unlike std's).
fn fnv1a(parts: &[&[u8]]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for p in parts {
        for &b in *p {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        // A separator, so ("ab", "c") and ("a", "bc") differ.
        h ^= 0xff;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// The job id of one run's files: the `job_id` its meta files recorded (the launcher's),
/// or, when none did, `run-<16 hex digits>`: the FNV-1a hash of the earliest process's
/// `anchor_wall_ns` (decimal), host and executable, the same every time the run is
/// exported. An error when the metas name several jobs, or there is no readable meta.
pub fn job_id_of(root: &Path, inputs: &Inputs) -> Result<String, Error> {
    let mut metas: Vec<_> = inputs
        .metas
        .iter()
        .filter_map(|f| read_meta_checked(&f.path).ok())
        .collect();
    let mut stream_ids: Vec<String> = Vec::new();
    if !inputs.streams.is_empty() {
        // A stream capture's processes name their job in every message.
        let lenient = crate::read::ReadOptions { lenient: true };
        let cap = crate::read::stream_capture::read_capture(&inputs.streams, &lenient)?;
        stream_ids.extend(cap.processes.iter().map(|p| p.job_id.clone()));
        metas.extend(cap.processes.into_iter().filter_map(|p| p.meta));
    }
    let mut ids: Vec<&str> = metas
        .iter()
        .map(|m| m.job_id.as_str())
        .chain(stream_ids.iter().map(String::as_str))
        .filter(|s| !s.is_empty())
        .collect();
    ids.sort_unstable();
    ids.dedup();
    match ids.as_slice() {
        [one] => return Ok(sanitize_job_id(one)),
        [] => {}
        many => {
            return Err(Error::Other(format!(
                "{}: the traces belong to {} jobs ({}): export each job's traces separately, \
                 or name the job with --job ID",
                root.display(),
                many.len(),
                many.join(", ")
            )))
        }
    }
    let first = metas
        .iter()
        .min_by(|a, b| {
            (a.anchor_wall_ns, &a.host, &a.exe, a.pid).cmp(&(
                b.anchor_wall_ns,
                &b.host,
                &b.exe,
                b.pid,
            ))
        })
        .ok_or_else(|| {
            Error::Other(format!(
                "{}: no readable meta.json to take the job id from: name the job with --job ID",
                root.display()
            ))
        })?;
    let h = fnv1a(&[
        first.anchor_wall_ns.to_string().as_bytes(),
        first.host.as_bytes(),
        first.exe.as_bytes(),
    ]);
    Ok(format!("run-{h:016x}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn job_ids_are_safe_partition_names() {
        assert_eq!(sanitize_job_id("1234"), "1234");
        assert_eq!(sanitize_job_id("123.pbs-server"), "123.pbs-server");
        assert_eq!(sanitize_job_id("prterun-host-42@1"), "prterun-host-42_1");
        assert_eq!(sanitize_job_id("a/b"), "a_b");
        assert_eq!(sanitize_job_id(".."), "_..");
        assert_eq!(sanitize_job_id(""), "_");
    }

    #[test]
    fn fnv_is_stable() {
        // Known FNV-1a value of "a", then the separator.
        assert_eq!(fnv1a(&[]), 0xcbf2_9ce4_8422_2325);
        assert_ne!(fnv1a(&[b"ab", b"c"]), fnv1a(&[b"a", b"bc"]));
        assert_eq!(fnv1a(&[b"x"]), fnv1a(&[b"x"]));
    }
}

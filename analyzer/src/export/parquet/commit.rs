//! How a job becomes part of an export all at once, whatever happens to the export.
//!
//! A job is written into a staging directory beside the export, never inside it, so no
//! engine's glob (`read_parquet('OUT/**/*.parquet')` looks into `_` and `.` directories
//! too) ever sees a half-written Parquet file:
//!
//! ```text
//! .OUT.h5prov-staging/lock-<id>         flock'ed by the export writing the job; its pid
//! .OUT.h5prov-staging/job=<id>/<table>/ the job's partitions being written
//! .OUT.h5prov-staging/job=<id>/COMMIT   written (atomically) once every table is complete
//! ```
//!
//! The export holds the job's lock from start to end. Steps: write every table into the
//! staging directory; write `COMMIT` (the commit point); rename each table's partition
//! into `OUT/<table>/job=<id>`; remove the staging directory. A job is exported once its
//! `COMMIT` exists: `h5prov report` then reads the tables not moved yet from the staging
//! directory ([`partition_dir`]), and the next export into `OUT` finishes the moves
//! ([`recover`]). A staging directory without `COMMIT` whose lock is free (its export died:
//! the kernel releases a `flock` with its process) is removed by the next export. A second
//! export of a job whose lock is held is refused with the job and the other export's pid.
//!
//! For tests, `H5PROV_TEST_EXPORT_STOP=<step>` makes an export abort itself (like a
//! `kill -9`: nothing is cleaned up) when it reaches `<step>`, and `<step>:sleep` makes it
//! wait there (for another process to kill it); the steps are [`STEPS`].

use super::schema::TABLES;
use crate::read::Error;
use rustix::fs::{flock, FlockOperation};
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// The steps of an export, in order, where the test hook may stop it: the worker tables
/// written, every table written, `COMMIT` written, after the 1st..4th table moved, and done.
pub const STEPS: [&str; 7] = [
    "records-written",
    "staged",
    "committed",
    "moved-1",
    "moved-2",
    "moved-3",
    "moved-4",
];

/// The test hook (see the module doc).
pub(crate) fn step(name: &str) {
    let Ok(v) = std::env::var("H5PROV_TEST_EXPORT_STOP") else {
        return;
    };
    if v == name {
        eprintln!("h5prov: test hook: export aborted at step {name}");
        std::process::abort();
    }
    if v.strip_suffix(":sleep") == Some(name) {
        eprintln!("h5prov: test hook: export waiting at step {name}");
        std::thread::sleep(std::time::Duration::from_secs(3600));
    }
}

/// The staging directory of the export `out` (which must exist): `.<name>.h5prov-staging`
/// beside it, on the same file system.
pub fn staging_root(out: &Path) -> PathBuf {
    let abs = std::fs::canonicalize(out).unwrap_or_else(|_| out.to_path_buf());
    let name = abs
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    abs.with_file_name(format!(".{name}.h5prov-staging"))
}

/// The staging directory of job `job`.
pub fn staging_dir(out: &Path, job: &str) -> PathBuf {
    staging_root(out).join(format!("job={job}"))
}

fn lock_path(out: &Path, job: &str) -> PathBuf {
    staging_root(out).join(format!("lock-{job}"))
}

/// Whether job `job` is committed but not all its tables are moved into `out` yet.
pub fn pending(out: &Path, job: &str) -> bool {
    staging_dir(out, job).join("COMMIT").is_file()
}

/// The jobs committed but not wholly moved into `out`.
pub fn pending_jobs(out: &Path) -> Vec<String> {
    let mut v = Vec::new();
    if let Ok(rd) = std::fs::read_dir(staging_root(out)) {
        for e in rd.flatten() {
            let n = e.file_name().to_string_lossy().into_owned();
            if let Some(j) = n.strip_prefix("job=") {
                if pending(out, j) {
                    v.push(j.to_string());
                }
            }
        }
    }
    v
}

/// Where the partition of `table` for job `job` is: in `out`, or, while the job's commit
/// is pending, still in its staging directory.
pub fn partition_dir(out: &Path, table: &str, job: &str) -> PathBuf {
    let d = super::job_dir(out, table, job);
    if d.exists() {
        return d;
    }
    let s = staging_dir(out, job);
    if s.join("COMMIT").is_file() && s.join(table).is_dir() {
        return s.join(table);
    }
    d
}

/// An exclusive hold on one job of one export (released when dropped, or by the kernel
/// when the process dies).
pub struct JobLock {
    file: File,
    path: PathBuf,
}

impl Drop for JobLock {
    fn drop(&mut self) {
        // Remove the lock file while holding it; whoever opened it meanwhile notices
        // (`acquire` checks that its lock is still the file at the path) and retries.
        let _ = std::fs::remove_file(&self.path);
        let _ = flock(&self.file, FlockOperation::Unlock);
    }
}

/// Takes the lock of job `job` of `out` without waiting: `Ok(None)` if another live export
/// holds it.
fn try_acquire(out: &Path, job: &str) -> Result<Option<JobLock>, Error> {
    let root = staging_root(out);
    let path = lock_path(out, job);
    let mut tries = 0;
    loop {
        std::fs::create_dir_all(&root).map_err(|e| Error::io(&root, e))?;
        let file = match OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
        {
            Ok(f) => f,
            // Another export removed the staging directory, empty, meanwhile: again.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && tries < 10 => {
                tries += 1;
                continue;
            }
            Err(e) => return Err(Error::io(&path, e)),
        };
        match flock(&file, FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => {}
            Err(e) if e == rustix::io::Errno::WOULDBLOCK => return Ok(None),
            Err(e) => return Err(Error::io(&path, e.into())),
        }
        // The holder before us may have removed the file after we opened it: our lock is
        // then on a file nobody else will find. Retry on the file at the path.
        let same = match (file.metadata(), std::fs::metadata(&path)) {
            (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
            _ => false,
        };
        if same {
            return Ok(Some(JobLock { file, path }));
        }
    }
}

/// Takes the lock of job `job` of `out` for this process, or says which export has it.
pub fn acquire(out: &Path, job: &str) -> Result<JobLock, Error> {
    match try_acquire(out, job)? {
        Some(mut l) => {
            let _ = l.file.set_len(0);
            let _ = writeln!(l.file, "{}", std::process::id());
            Ok(l)
        }
        None => {
            let path = lock_path(out, job);
            let mut pid = String::new();
            let _ = File::open(&path).and_then(|mut f| f.read_to_string(&mut pid));
            let pid = pid.trim();
            Err(Error::Other(format!(
                "{}: job {job} is being exported into {} by another export right now \
                 (pid {}, holding {}); nothing was written: wait for it to finish",
                out.display(),
                out.display(),
                if pid.is_empty() { "unknown" } else { pid },
                path.display()
            )))
        }
    }
}

/// With job `job`'s lock held: moves a committed job's remaining tables into `out`, or
/// removes the staging directory of an export that died before its commit.
pub fn finish(out: &Path, job: &str, _lock: &JobLock) -> Result<(), Error> {
    let stage = staging_dir(out, job);
    if !stage.exists() {
        return Ok(());
    }
    if stage.join("COMMIT").is_file() {
        for (i, t) in TABLES.iter().enumerate() {
            let src = stage.join(t);
            if src.exists() {
                let dst = super::job_dir(out, t, job);
                let parent = out.join(t);
                std::fs::create_dir_all(&parent).map_err(|e| Error::io(&parent, e))?;
                std::fs::rename(&src, &dst).map_err(|e| Error::io(&dst, e))?;
            }
            step(STEPS[3 + i]);
        }
    }
    std::fs::remove_dir_all(&stage).map_err(|e| Error::io(&stage, e))
}

/// Finishes or removes what dead exports into `out` left (see the module doc), and the
/// `_tmp-job=<id>-<pid>` directories that exports of older versions left inside `out`
/// when their process is gone.
pub fn recover(out: &Path) -> Result<(), Error> {
    if let Ok(rd) = std::fs::read_dir(staging_root(out)) {
        let mut jobs: Vec<String> = rd
            .flatten()
            .filter_map(|e| {
                let n = e.file_name().to_string_lossy().into_owned();
                let j = n.strip_prefix("job=").or_else(|| n.strip_prefix("lock-"))?;
                Some(j.to_string())
            })
            .collect();
        jobs.sort();
        jobs.dedup();
        for j in jobs {
            if let Some(l) = try_acquire(out, &j)? {
                finish(out, &j, &l)?;
            }
        }
        // Empty once nothing is staged.
        let _ = std::fs::remove_dir(staging_root(out));
    }
    if let Ok(rd) = std::fs::read_dir(out) {
        for e in rd.flatten() {
            let n = e.file_name().to_string_lossy().into_owned();
            let Some(rest) = n.strip_prefix("_tmp-job=") else {
                continue;
            };
            let pid = rest
                .rsplit_once('-')
                .and_then(|(_, p)| p.parse::<u32>().ok());
            if let Some(pid) = pid {
                if !Path::new(&format!("/proc/{pid}")).exists() {
                    let _ = std::fs::remove_dir_all(e.path());
                }
            }
        }
    }
    Ok(())
}

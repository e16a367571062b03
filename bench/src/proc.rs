//! Launching a group of workload processes and measuring them.
//!
//! A group is `P` copies of one program started at once, rank `r` getting
//! `PMI_RANK=r` and `PMI_SIZE=P`, like a launcher would. Each child is reaped
//! with `wait4(2)`, which returns its resource usage: `ru_maxrss` is its peak
//! resident set size.

use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use crate::config::RANK_VARS;
use crate::BenchError;

/// One command to start `procs` times.
#[derive(Clone, Debug)]
pub struct Launch {
    /// Executable.
    pub program: PathBuf,
    /// Arguments.
    pub args: Vec<String>,
    /// Environment changes: `Some` sets, `None` removes.
    pub env: Vec<(String, Option<String>)>,
    /// Number of processes (ranks).
    pub procs: usize,
    /// Optional wrapper command (e.g. valgrind and its options) put before `program`.
    pub wrapper: Vec<String>,
    /// Start the group as one `mpirun -np procs` (MPI mode) instead of `procs` processes
    /// with `PMI_RANK`/`PMI_SIZE`.
    pub mpi: bool,
}

/// What one process did.
#[derive(Clone, Debug)]
pub struct ProcResult {
    /// Its rank.
    pub rank: usize,
    /// Peak resident set size in KiB (`ru_maxrss`).
    pub max_rss_kb: u64,
    /// The `key=value` pairs of its stdout.
    pub values: BTreeMap<String, String>,
}

/// What a whole group did.
#[derive(Clone, Debug)]
pub struct GroupResult {
    /// From the first spawn to the last exit, ns.
    pub wall_ns: u64,
    /// Per process, by rank.
    pub procs: Vec<ProcResult>,
}

impl GroupResult {
    /// Sum over processes of the numeric value `key` (0 where missing).
    pub fn sum(&self, key: &str) -> u64 {
        self.procs.iter().map(|p| num(&p.values, key)).sum()
    }

    /// Maximum over processes of the numeric value `key` (0 where missing).
    pub fn max(&self, key: &str) -> u64 {
        self.procs
            .iter()
            .map(|p| num(&p.values, key))
            .max()
            .unwrap_or(0)
    }
}

fn num(values: &BTreeMap<String, String>, key: &str) -> u64 {
    values.get(key).and_then(|v| v.parse().ok()).unwrap_or(0)
}

/// Parses space-separated `key=value` pairs from a workload's stdout.
pub fn parse_values(stdout: &str) -> BTreeMap<String, String> {
    stdout
        .split_whitespace()
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// How a reaped child ended.
struct Reaped {
    /// Raw `wait` status.
    status: i32,
    /// `ru_maxrss`, KiB on Linux.
    max_rss_kb: u64,
    /// `ru_utime + ru_stime`, ns: CPU time of the child, all its threads.
    cpu_ns: u64,
}

/// `wait4(pid)`, retried on `EINTR`.
#[allow(unsafe_code)]
fn wait4_pid(pid: u32) -> io::Result<Reaped> {
    let pid = libc::pid_t::try_from(pid)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "pid out of range"))?;
    let mut status: libc::c_int = 0;
    // SAFETY: `rusage` is a plain C struct of integers and timevals, for which
    // all-zero bytes are a valid value.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: `status` and `usage` are valid, exclusively borrowed, live for
        // the call, and have the types wait4(2) writes. `pid` is a child of this
        // process that nothing else reaps (its `Child` handle is never waited on).
        let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        if r == pid {
            return Ok(Reaped {
                status,
                max_rss_kb: u64::try_from(usage.ru_maxrss).unwrap_or(0),
                cpu_ns: [usage.ru_utime, usage.ru_stime]
                    .iter()
                    .map(|t| {
                        u64::try_from(t.tv_sec).unwrap_or(0) * 1_000_000_000
                            + u64::try_from(t.tv_usec).unwrap_or(0) * 1_000
                    })
                    .sum(),
            });
        }
        let err = io::Error::last_os_error();
        if err.kind() != io::ErrorKind::Interrupted {
            return Err(err);
        }
    }
}

/// Wall time and peak memory of one process run by [`run_measured`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Measured {
    /// From spawn to exit, ns.
    pub wall_ns: u64,
    /// Peak resident set size in KiB (`ru_maxrss` from `wait4(2)`).
    pub max_rss_kb: u64,
    /// CPU time, user and system, of all its threads, ns (`ru_utime + ru_stime`).
    pub cpu_ns: u64,
}

/// Starts `cmd` as it is configured (arguments, environment, stdio), reaps it with
/// `wait4(2)` and returns its wall time and peak RSS. A failed process is an error naming
/// `what`, its status and the tail of `err_log` (where the caller sent its stderr), if any.
pub fn run_measured(
    cmd: &mut Command,
    what: &str,
    err_log: Option<&Path>,
) -> Result<Measured, BenchError> {
    let start = Instant::now();
    let child = cmd
        .spawn()
        .map_err(|e| BenchError::new(format!("cannot start {what}: {e}")))?;
    let r = wait4_pid(child.id())?;
    let wall_ns = u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX);
    if !(libc::WIFEXITED(r.status) && libc::WEXITSTATUS(r.status) == 0) {
        let tail = err_log.map_or_else(String::new, |p| {
            format!("\n  stderr ({}):\n{}", p.display(), tail(p, 2000))
        });
        return Err(BenchError::new(format!(
            "{what} failed ({}){tail}",
            describe_status(r.status)
        )));
    }
    Ok(Measured {
        wall_ns,
        max_rss_kb: r.max_rss_kb,
        cpu_ns: r.cpu_ns,
    })
}

fn describe_status(status: i32) -> String {
    if libc::WIFEXITED(status) {
        format!("exit code {}", libc::WEXITSTATUS(status))
    } else if libc::WIFSIGNALED(status) {
        format!("killed by signal {}", libc::WTERMSIG(status))
    } else {
        format!("wait status {status}")
    }
}

fn tail(path: &Path, max: usize) -> String {
    let s = fs::read_to_string(path).unwrap_or_default();
    let start = s.len().saturating_sub(max);
    let start = (start..=s.len())
        .find(|&i| s.is_char_boundary(i))
        .unwrap_or(s.len());
    s[start..].to_string()
}

/// Starts the group, waits for every process and collects its output.
///
/// stdout and stderr of rank `r` go to `log_dir/rank<r>.{out,err}`. A process
/// that fails makes the whole group an error naming the command, environment,
/// status and the tail of its stderr.
pub fn run_group(launch: &Launch, log_dir: &Path) -> Result<GroupResult, BenchError> {
    fs::create_dir_all(log_dir)?;
    if launch.mpi {
        return run_mpi_group(launch, log_dir);
    }
    let mut children = Vec::with_capacity(launch.procs);
    let start = Instant::now();
    for rank in 0..launch.procs {
        let out_path = log_dir.join(format!("rank{rank}.out"));
        let err_path = log_dir.join(format!("rank{rank}.err"));
        let mut cmd = match launch.wrapper.split_first() {
            Some((w, rest)) => {
                let mut c = Command::new(w);
                c.args(rest).arg(&launch.program);
                c
            }
            None => Command::new(&launch.program),
        };
        cmd.args(&launch.args)
            .stdin(Stdio::null())
            .stdout(File::create(&out_path)?)
            .stderr(File::create(&err_path)?);
        for var in RANK_VARS {
            cmd.env_remove(var);
        }
        for (k, v) in &launch.env {
            match v {
                Some(v) => cmd.env(k, v),
                None => cmd.env_remove(k),
            };
        }
        cmd.env("PMI_RANK", rank.to_string())
            .env("PMI_SIZE", launch.procs.to_string());
        let child = cmd.spawn().map_err(|e| {
            BenchError::new(format!("cannot start {}: {e}", launch.program.display()))
        })?;
        children.push((rank, child.id(), out_path, err_path));
    }
    let mut reaped = Vec::with_capacity(children.len());
    for (rank, pid, out_path, err_path) in children {
        reaped.push((rank, wait4_pid(pid)?, out_path, err_path));
    }
    let wall_ns = u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX);

    let mut procs = Vec::with_capacity(reaped.len());
    for (rank, r, out_path, err_path) in reaped {
        if !(libc::WIFEXITED(r.status) && libc::WEXITSTATUS(r.status) == 0) {
            let env: Vec<String> = launch
                .env
                .iter()
                .map(|(k, v)| match v {
                    Some(v) => format!("{k}='{v}'"),
                    None => format!("-u {k}"),
                })
                .collect();
            return Err(BenchError::new(format!(
                "workload failed ({}), rank {rank} of {}:\n  command: {} {} {}\n  env: {} PMI_RANK={rank} PMI_SIZE={}\n  stderr ({}):\n{}",
                describe_status(r.status),
                launch.procs,
                launch.wrapper.join(" "),
                launch.program.display(),
                launch.args.join(" "),
                env.join(" "),
                launch.procs,
                err_path.display(),
                tail(&err_path, 2000)
            )));
        }
        let stdout = fs::read_to_string(&out_path)?;
        procs.push(ProcResult {
            rank,
            max_rss_kb: r.max_rss_kb,
            values: parse_values(&stdout),
        });
    }
    Ok(GroupResult { wall_ns, procs })
}

/// Environment that lets OpenMPI's `mpirun` run as root and with more ranks than cores,
/// without CMA (containers forbid ptrace); variables already set are left alone.
pub const MPI_ENV: [(&str, &str); 4] = [
    ("OMPI_ALLOW_RUN_AS_ROOT", "1"),
    ("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1"),
    ("OMPI_MCA_rmaps_base_oversubscribe", "1"),
    ("OMPI_MCA_btl_vader_single_copy_mechanism", "none"),
];

/// Splits `mpirun`'s merged stdout into one result per rank, from the `rank=` value of each
/// workload's `key=value` line. Lines without `rank=` are ignored.
pub fn mpi_results(stdout: &str) -> Vec<ProcResult> {
    let mut v: Vec<ProcResult> = stdout
        .lines()
        .map(parse_values)
        .filter_map(|values| {
            let rank = values.get("rank")?.parse().ok()?;
            Some(ProcResult {
                rank,
                max_rss_kb: 0,
                values,
            })
        })
        .collect();
    v.sort_by_key(|p| p.rank);
    v
}

/// MPI mode of [`run_group`]: `mpirun -np N [wrapper] program args`, output in
/// `log_dir/mpirun.{out,err}`. Peak RSS per rank is not available (0): `wait4` sees mpirun.
fn run_mpi_group(launch: &Launch, log_dir: &Path) -> Result<GroupResult, BenchError> {
    let out_path = log_dir.join("mpirun.out");
    let err_path = log_dir.join("mpirun.err");
    let mut cmd = Command::new("mpirun");
    cmd.arg("-np")
        .arg(launch.procs.to_string())
        .args(&launch.wrapper)
        .arg(&launch.program)
        .args(&launch.args)
        .stdin(Stdio::null())
        .stdout(File::create(&out_path)?)
        .stderr(File::create(&err_path)?);
    for var in RANK_VARS {
        cmd.env_remove(var);
    }
    for (k, v) in MPI_ENV {
        if std::env::var_os(k).is_none() {
            cmd.env(k, v);
        }
    }
    for (k, v) in &launch.env {
        match v {
            Some(v) => cmd.env(k, v),
            None => cmd.env_remove(k),
        };
    }
    let start = Instant::now();
    let status = cmd
        .status()
        .map_err(|e| BenchError::new(format!("cannot start mpirun (install openmpi-bin): {e}")))?;
    let wall_ns = u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX);
    let procs = mpi_results(&fs::read_to_string(&out_path)?);
    if !status.success() || procs.len() != launch.procs {
        return Err(BenchError::new(format!(
            "MPI workload failed ({status}, {} of {} ranks reported):\n  command: mpirun -np {} {} {}\n  stderr ({}):\n{}",
            procs.len(),
            launch.procs,
            launch.procs,
            launch.program.display(),
            launch.args.join(" "),
            err_path.display(),
            tail(&err_path, 2000)
        )));
    }
    Ok(GroupResult { wall_ns, procs })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_key_values() {
        let v = parse_values("calls=12 ns=34 junk x=\n");
        assert_eq!(v.get("calls").map(String::as_str), Some("12"));
        assert_eq!(v.get("ns").map(String::as_str), Some("34"));
        assert_eq!(v.get("x").map(String::as_str), Some(""));
        assert!(!v.contains_key("junk"));
    }

    #[test]
    fn splits_mpirun_output_by_rank() {
        let out = "ns=5 rank=1 size=2\nwarning: something\nns=7 rank=0 size=2\n";
        let r = mpi_results(out);
        assert_eq!(r.len(), 2);
        assert_eq!(r[0].rank, 0);
        assert_eq!(r[0].values["ns"], "7");
        assert_eq!(r[1].values["ns"], "5");
    }
}

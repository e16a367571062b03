//! Running external commands with logs, timing, and errors that name the command.

use crate::error::{Context, Error, Result};
use std::fs::File;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::Instant;

/// Quotes `s` for a POSIX shell when needed.
pub fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// The command line of `cmd`, shell-quoted, with the environment changes it carries.
pub fn command_line(cmd: &Command) -> String {
    let mut parts: Vec<String> = cmd
        .get_envs()
        .filter_map(|(k, v)| {
            v.map(|v| {
                format!(
                    "{}={}",
                    k.to_string_lossy(),
                    shell_quote(&v.to_string_lossy())
                )
            })
        })
        .collect();
    parts.push(shell_quote(&cmd.get_program().to_string_lossy()));
    parts.extend(cmd.get_args().map(|a| shell_quote(&a.to_string_lossy())));
    parts.join(" ")
}

/// Finds `name` on `PATH`.
pub fn find_program(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
}

/// Describes an exit status for humans (`exit status 1`, `killed by signal 11`, ...).
///
/// Commands run under coreutils `timeout` exit with 124 on timeout and 128+N when the
/// program died of signal N.
pub fn describe_status(status: ExitStatus, under_timeout: bool) -> String {
    match (status.code(), status.signal()) {
        (Some(124), _) if under_timeout => "timed out".to_string(),
        (Some(c), _) if under_timeout && c > 128 && c < 160 => {
            format!("killed by signal {}", c - 128)
        }
        (Some(c), _) => format!("exit status {c}"),
        (None, Some(s)) => format!("killed by signal {s}"),
        (None, None) => "unknown exit status".to_string(),
    }
}

/// The last `n` lines of a file (empty if unreadable).
pub fn tail(path: &Path, n: usize) -> String {
    let text = std::fs::read(path)
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// Runs `cmd` with stdout and stderr written to `stdout`/`stderr` files; returns the exit
/// status and the wall time in seconds. Fails only when the command cannot be started.
pub fn run_to_files(cmd: &mut Command, stdout: &Path, stderr: &Path) -> Result<(ExitStatus, f64)> {
    let out = File::create(stdout).context(|| format!("creating {}", stdout.display()))?;
    let err = File::create(stderr).context(|| format!("creating {}", stderr.display()))?;
    let start = Instant::now();
    let status = cmd
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .status()
        .context(|| format!("starting `{}`", command_line(cmd)))?;
    Ok((status, start.elapsed().as_secs_f64()))
}

/// Runs one named step of a procedure, output (stdout and stderr) appended to `log`.
/// On failure the error names the step, the command, the status, the log and its tail.
pub fn run_step(step: &str, cmd: &mut Command, log: &Path) -> Result<f64> {
    if let Some(dir) = log.parent() {
        std::fs::create_dir_all(dir)
            .context(|| format!("step '{step}': creating {}", dir.display()))?;
    }
    let file =
        File::create(log).context(|| format!("step '{step}': creating log {}", log.display()))?;
    let file2 = file
        .try_clone()
        .context(|| format!("step '{step}': log {}", log.display()))?;
    let start = Instant::now();
    let status = cmd
        .stdin(Stdio::null())
        .stdout(file)
        .stderr(file2)
        .status()
        .map_err(|e| {
            Error::new(format!(
                "step '{step}': cannot start `{}`: {e}",
                command_line(cmd)
            ))
        })?;
    let secs = start.elapsed().as_secs_f64();
    if !status.success() {
        return Err(Error::new(format!(
            "step '{step}' failed: `{}` ended with {} after {secs:.1} s.\nLog: {}\nLast lines:\n{}",
            command_line(cmd),
            describe_status(status, false),
            log.display(),
            tail(log, 25)
        )));
    }
    Ok(secs)
}

/// Copies a directory tree (files and directories; symlinks are copied as their targets).
pub fn copy_tree(from: &Path, to: &Path) -> Result<()> {
    std::fs::create_dir_all(to).context(|| format!("creating {}", to.display()))?;
    for entry in
        std::fs::read_dir(from).context(|| format!("reading directory {}", from.display()))?
    {
        let entry = entry.context(|| format!("reading directory {}", from.display()))?;
        let src = entry.path();
        let dst = to.join(entry.file_name());
        if src.is_dir() {
            copy_tree(&src, &dst)?;
        } else {
            std::fs::copy(&src, &dst)
                .context(|| format!("copying {} to {}", src.display(), dst.display()))?;
        }
    }
    Ok(())
}

/// Removes `dir` if present and creates it empty.
pub fn fresh_dir(dir: &Path) -> Result<()> {
    if dir.exists() {
        std::fs::remove_dir_all(dir).context(|| format!("removing {}", dir.display()))?;
    }
    std::fs::create_dir_all(dir).context(|| format!("creating {}", dir.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting() {
        assert_eq!(shell_quote("/a/b-c.txt"), "/a/b-c.txt");
        assert_eq!(
            shell_quote("pass_through under_vol=0;under_info={}"),
            "'pass_through under_vol=0;under_info={}'"
        );
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
        assert_eq!(shell_quote(""), "''");
    }

    #[test]
    fn statuses() {
        let st = |code: i32| ExitStatus::from_raw(code << 8);
        assert_eq!(describe_status(st(124), true), "timed out");
        assert_eq!(describe_status(st(124), false), "exit status 124");
        assert_eq!(describe_status(st(139), true), "killed by signal 11");
        assert_eq!(describe_status(st(1), true), "exit status 1");
        assert_eq!(
            describe_status(ExitStatus::from_raw(11), false),
            "killed by signal 11"
        );
    }
}

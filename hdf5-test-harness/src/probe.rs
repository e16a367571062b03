//! The VOL probe: proof that a mode's connector was really loaded.
//!
//! `c/vol_probe.c` is compiled once per build tree (with the compiler HDF5 was built with,
//! against the build tree's `libhdf5.so`, with an rpath) and run with each mode's
//! environment before its suites.

use crate::buildtree::BuildTree;
use crate::error::{Context, Error, Result};
use crate::process::{command_line, describe_status, tail};
use crate::results::ProbeRecord;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The probe's C source, embedded at compile time.
pub const SOURCE: &str = include_str!("../c/vol_probe.c");

/// Parses the probe's `key=value` lines.
pub fn parse_output(stdout: &str) -> BTreeMap<String, String> {
    stdout
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// Checks the probe's output against the expected connector name.
pub fn verify(expected: &str, stdout: &str) -> std::result::Result<ProbeRecord, String> {
    let kv = parse_output(stdout);
    let get = |k: &str| kv.get(k).cloned().unwrap_or_default();
    let record = ProbeRecord {
        expected: expected.to_string(),
        fapl_connector: get("fapl_connector"),
        file_connector: get("file_connector"),
        output: stdout.to_string(),
    };
    if get("status") != "ok" {
        return Err("the probe did not finish (no status=ok line)".into());
    }
    if record.fapl_connector != expected || record.file_connector != expected {
        return Err(format!(
            "HDF5 used connector '{}' (default FAPL) / '{}' (created file), not '{expected}': \
             the requested connector was not loaded and HDF5 fell back",
            record.fapl_connector, record.file_connector
        ));
    }
    Ok(record)
}

/// A compiled probe.
#[derive(Debug, Clone)]
pub struct Probe {
    /// The executable.
    pub exe: PathBuf,
}

impl Probe {
    /// Compiles the probe into `dir` unless an up-to-date binary for this build is there.
    pub fn build(tree: &BuildTree, dir: &Path) -> Result<Self> {
        std::fs::create_dir_all(dir).context(|| format!("creating {}", dir.display()))?;
        let src = dir.join("vol_probe.c");
        let exe = dir.join("vol_probe");
        let stamp_path = dir.join("vol_probe.stamp");
        let lib_dir = tree.dir.join("bin");
        let mut cmd = Command::new(&tree.c_compiler);
        cmd.arg("-O1").arg("-o").arg(&exe).arg(&src);
        for inc in tree.include_dirs() {
            cmd.arg(format!("-I{}", inc.display()));
        }
        cmd.arg(format!("-L{}", lib_dir.display()))
            .arg("-lhdf5")
            .arg(format!("-Wl,-rpath,{}", lib_dir.display()));
        let stamp = format!("{}\n{}\n{}", tree.build_id(), command_line(&cmd), SOURCE);
        if exe.is_file()
            && std::fs::read_to_string(&stamp_path).ok().as_deref() == Some(stamp.as_str())
        {
            return Ok(Probe { exe });
        }
        std::fs::write(&src, SOURCE).context(|| format!("writing {}", src.display()))?;
        let log = dir.join("compile.log");
        crate::process::run_step("compile the VOL probe", &mut cmd, &log)?;
        std::fs::write(&stamp_path, stamp)
            .context(|| format!("writing {}", stamp_path.display()))?;
        Ok(Probe { exe })
    }

    /// Runs the probe in `scratch` with `cmd_env` applied and verifies the connector name.
    pub fn check(
        &self,
        expected: &str,
        scratch: &Path,
        apply_env: impl Fn(&mut Command),
    ) -> Result<ProbeRecord> {
        crate::process::fresh_dir(scratch)?;
        let mut cmd = Command::new(&self.exe);
        cmd.arg(scratch).current_dir(scratch);
        apply_env(&mut cmd);
        let (out, err) = (scratch.join("probe.out"), scratch.join("probe.err"));
        let (status, _) = crate::process::run_to_files(&mut cmd, &out, &err)?;
        let stdout = std::fs::read_to_string(&out).unwrap_or_default();
        let result = if status.success() {
            verify(expected, &stdout)
        } else {
            Err(format!(
                "the probe ended with {}",
                describe_status(status, false)
            ))
        };
        result.map_err(|problem| {
            Error::new(format!(
                "connector check failed for '{expected}': {problem}.\nProbe: `{}`\nstdout:\n{}\nstderr (last lines):\n{}",
                command_line(&cmd),
                stdout.trim_end(),
                tail(&err, 30)
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PT: &str = "library_version=1.14.5\nenv_HDF5_VOL_CONNECTOR=pass_through under_vol=0;under_info={}\n\
fapl_connector_value=1\nfapl_connector_info=under_vol=0;under_info={}\nfile_connector=pass_through\n\
file_connector_value=1\nfapl_connector=pass_through\nstatus=ok\n";

    #[test]
    fn accepts_the_expected_connector() {
        let r = verify("pass_through", PT).unwrap();
        assert_eq!(r.fapl_connector, "pass_through");
        assert_eq!(r.file_connector, "pass_through");
        assert_eq!(
            parse_output(PT)["fapl_connector_info"],
            "under_vol=0;under_info={}"
        );
    }

    #[test]
    fn rejects_fallback_and_incomplete_output() {
        let native = PT.replace("=pass_through\n", "=native\n");
        let err = verify("pass_through", &native).unwrap_err();
        assert!(err.contains("fell back"), "{err}");
        let err = verify("pass_through", "library_version=1.14.5\n").unwrap_err();
        assert!(err.contains("status=ok"), "{err}");
    }
}

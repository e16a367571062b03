//! Pure helpers that turn HDF5's ctest list into what the harness runs.

use crate::ctest::CtestTest;
use crate::error::{Error, Result};
use std::collections::HashMap;

/// Prefix of the native entries in HDF5's pass-through-VOL ctest list.
pub const VOL_NATIVE_PREFIX: &str = "VOL-vol_native-";
/// ctest's default per-test timeout in HDF5's `DartConfiguration.tcl`.
pub const DEFAULT_TIMEOUT_SECS: f64 = 1200.0;

/// One `test/` executable of the pass-through-VOL list, as `volTest.cmake` would run it.
#[derive(Debug, Clone, PartialEq)]
pub struct VolTest {
    /// Short name (`dsets`), from `VOL-vol_native-dsets`.
    pub name: String,
    /// `TEST_PROGRAM`.
    pub program: String,
    /// `TEST_ARGS` (a CMake list).
    pub args: Vec<String>,
    /// `TEST_EXPECT`: the exit code that means success.
    pub expect: i32,
    /// ctest `TIMEOUT`, or [`DEFAULT_TIMEOUT_SECS`].
    pub timeout: f64,
    /// Short names of tests that must run first, in the same folder.
    pub depends: Vec<String>,
}

/// The enabled `VOL-vol_native-*` tests, in ctest order.
pub fn vol_tests(all: &[CtestTest]) -> Result<Vec<VolTest>> {
    let mut out = Vec::new();
    for t in all
        .iter()
        .filter(|t| t.name.starts_with(VOL_NATIVE_PREFIX) && !t.disabled)
    {
        let program = t.cmake_define("TEST_PROGRAM").ok_or_else(|| {
            Error::new(format!(
                "ctest test {}: no TEST_PROGRAM in its volTest.cmake command",
                t.name
            ))
        })?;
        let expect = t.cmake_define("TEST_EXPECT").unwrap_or("0");
        let expect = expect.parse().map_err(|_| {
            Error::new(format!(
                "ctest test {}: TEST_EXPECT={expect:?} is not a number",
                t.name
            ))
        })?;
        out.push(VolTest {
            name: t.name[VOL_NATIVE_PREFIX.len()..].to_string(),
            program: program.to_string(),
            args: t
                .cmake_define("TEST_ARGS")
                .unwrap_or("")
                .split(';')
                .filter(|a| !a.is_empty())
                .map(str::to_string)
                .collect(),
            expect,
            timeout: t.timeout.unwrap_or(DEFAULT_TIMEOUT_SECS),
            depends: t
                .depends
                .iter()
                .filter_map(|d| d.strip_prefix(VOL_NATIVE_PREFIX).map(str::to_string))
                .collect(),
        });
    }
    if out.is_empty() {
        return Err(Error::new(format!(
            "no {VOL_NATIVE_PREFIX}* tests in the ctest list; was HDF5 configured with -DHDF5_TEST_PASSTHROUGH_VOL=ON?"
        )));
    }
    Ok(out)
}

/// Groups tests linked by `depends` into units that must run in order in one folder.
/// Returns indices into `tests`; each unit keeps ctest order, units are ordered by their
/// first member.
pub fn dependency_units(tests: &[VolTest]) -> Vec<Vec<usize>> {
    let index: HashMap<&str, usize> = tests
        .iter()
        .enumerate()
        .map(|(i, t)| (t.name.as_str(), i))
        .collect();
    let mut parent: Vec<usize> = (0..tests.len()).collect();
    fn find(parent: &mut [usize], mut i: usize) -> usize {
        while parent[i] != i {
            parent[i] = parent[parent[i]];
            i = parent[i];
        }
        i
    }
    for (i, t) in tests.iter().enumerate() {
        for d in &t.depends {
            if let Some(&j) = index.get(d.as_str()) {
                let (a, b) = (find(&mut parent, i), find(&mut parent, j));
                parent[a.max(b)] = a.min(b);
            }
        }
    }
    let mut units: Vec<Vec<usize>> = Vec::new();
    let mut unit_of_root: HashMap<usize, usize> = HashMap::new();
    for i in 0..tests.len() {
        let root = find(&mut parent, i);
        let u = *unit_of_root.entry(root).or_insert_with(|| {
            units.push(Vec::new());
            units.len() - 1
        });
        units[u].push(i);
    }
    units
}

/// True when a `test/` program that exited successfully skipped itself as a whole
/// (`SKIPPED - read-only S3 VFD not built`, all parts `-SKIP-`, "not implemented in this
/// configuration"): no `PASSED` anywhere and some skip marker.
pub fn program_skipped(stdout: &str) -> bool {
    if stdout.contains("PASSED") {
        return false;
    }
    stdout
        .lines()
        .any(|l| l.trim_start().starts_with("SKIPPED"))
        || stdout.contains("-SKIP-")
        || stdout.contains(" skipped")
        || stdout.contains("not implemented in this configuration")
}

/// The API test areas and the `h5_api_test` command of each (`[program, area]`), in ctest
/// order, from tests named `h5_api_test_<area>` (plain or through `h5_api_test_driver`).
pub fn api_areas(all: &[CtestTest]) -> Result<Vec<(String, Vec<String>)>> {
    let mut out = Vec::new();
    for t in all
        .iter()
        .filter(|t| t.name.starts_with("h5_api_test_") && !t.disabled)
    {
        let pos = t
            .command
            .iter()
            .position(|a| a.ends_with("/h5_api_test") || a == "h5_api_test");
        let Some(pos) = pos else { continue };
        let area = t.command.get(pos + 1).cloned().unwrap_or_default();
        if area.is_empty() || area.starts_with('-') {
            continue;
        }
        out.push((area.clone(), vec![t.command[pos].clone(), area]));
    }
    if out.is_empty() {
        return Err(Error::new(
            "no h5_api_test_<area> tests in the ctest list; was HDF5 configured with -DHDF5_TEST_API=ON?",
        ));
    }
    Ok(out)
}

/// Directories that tools tests put in their own `HDF5_PLUGIN_PATH` (through runTest.cmake's
/// `TEST_ENV_VAR`/`TEST_ENV_VALUE`), replacing the harness's. Sorted, unique.
pub fn tools_plugin_dirs(tools: &[CtestTest]) -> Vec<String> {
    let mut dirs: Vec<String> = tools
        .iter()
        .filter(|t| t.cmake_define("TEST_ENV_VAR") == Some("HDF5_PLUGIN_PATH"))
        .filter_map(|t| t.cmake_define("TEST_ENV_VALUE"))
        .flat_map(|v| v.split(':').map(str::to_string).collect::<Vec<_>>())
        .filter(|d| !d.is_empty())
        .collect();
    dirs.sort();
    dirs.dedup();
    dirs
}

/// True when a connector string needs a plugin library: any connector other than HDF5's
/// built-in `native`/`pass_through`, by name or by an `under_vol=<value>` other than 0 or 1.
pub fn needs_plugins(connector: &str) -> bool {
    let top = connector.split_whitespace().next().unwrap_or("native");
    if !matches!(top, "native" | "pass_through") {
        return true;
    }
    connector.split("under_vol=").skip(1).any(|rest| {
        let value: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
        !matches!(value.as_str(), "0" | "1")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vt(name: &str, depends: &[&str]) -> VolTest {
        VolTest {
            name: name.into(),
            program: format!("/b/bin/{name}"),
            args: vec![],
            expect: 0,
            timeout: DEFAULT_TIMEOUT_SECS,
            depends: depends.iter().map(|d| d.to_string()).collect(),
        }
    }

    #[test]
    fn units_follow_dependencies() {
        let tests = [
            vt("a", &[]),
            vt("flush1", &[]),
            vt("b", &[]),
            vt("flush2", &["flush1"]),
            vt("c", &["zzz"]),
        ];
        assert_eq!(
            dependency_units(&tests),
            vec![vec![0], vec![1, 3], vec![2], vec![4]]
        );
    }

    #[test]
    fn vol_tests_from_ctest() {
        let mk = |name: &str, prog: &str, depends: Vec<String>, disabled: bool| CtestTest {
            name: name.into(),
            command: vec![
                "/usr/bin/cmake".into(),
                "-D".into(),
                format!("TEST_PROGRAM={prog}"),
                "-D".into(),
                "TEST_ARGS:STRING=-x;y".into(),
                "-D".into(),
                "TEST_EXPECT=0".into(),
            ],
            depends,
            disabled,
            timeout: Some(10.0),
            ..CtestTest::default()
        };
        let all = vec![
            mk("VOL-vol_native-flush1", "/b/flush1", vec![], false),
            mk(
                "VOL-vol_native-flush2",
                "/b/flush2",
                vec!["VOL-vol_native-flush1".into()],
                false,
            ),
            mk("VOL-vol_pass_through1-flush1", "/b/flush1", vec![], false),
            mk("VOL-vol_native-off", "/b/off", vec![], true),
        ];
        let v = vol_tests(&all).unwrap();
        assert_eq!(v.len(), 2);
        assert_eq!(v[1].name, "flush2");
        assert_eq!(v[1].depends, ["flush1"]);
        assert_eq!(v[0].args, ["-x", "y"]);
        assert_eq!(v[0].timeout, 10.0);
        assert!(vol_tests(&all[2..]).is_err());
    }

    #[test]
    fn skip_heuristic() {
        assert!(program_skipped(
            "Testing ros3 VFD functionality.\nSKIPPED - read-only S3 VFD not built\n"
        ));
        assert!(program_skipped(
            "\nnot implemented in this configuration.\n"
        ));
        assert!(program_skipped("Testing HDFS fapl          -SKIP-\n"));
        assert!(!program_skipped(
            "Testing big   PASSED\nTesting other   -SKIP-\n"
        ));
        assert!(!program_skipped("All tests were successful.\n"));
    }

    #[test]
    fn api_areas_plain_and_driver() {
        let plain = CtestTest {
            name: "h5_api_test_file".into(),
            command: vec!["/b/bin/h5_api_test".into(), "file".into()],
            ..CtestTest::default()
        };
        let driver = CtestTest {
            name: "h5_api_test_group".into(),
            command: [
                "/b/bin/h5_api_test_driver",
                "--server",
                "s",
                "--client",
                "/b/bin/h5_api_test",
                "group",
                "--serial",
            ]
            .map(String::from)
            .to_vec(),
            ..CtestTest::default()
        };
        let a = api_areas(&[plain, driver]).unwrap();
        assert_eq!(
            a[0],
            (
                "file".to_string(),
                vec!["/b/bin/h5_api_test".to_string(), "file".to_string()]
            )
        );
        assert_eq!(a[1].0, "group");
        assert!(api_areas(&[]).is_err());
    }

    #[test]
    fn plugin_needs() {
        assert!(!needs_plugins("pass_through under_vol=0;under_info={}"));
        assert!(!needs_plugins(
            "pass_through under_vol=1;under_info={under_vol=0;under_info={}}"
        ));
        assert!(needs_plugins(
            "pass_through under_vol=416;under_info={under_vol=0;under_info={}}"
        ));
        assert!(needs_plugins("h5prov under_vol=0;under_info={}"));
        assert!(!needs_plugins("native"));
    }

    #[test]
    fn plugin_dirs_of_tools_tests() {
        let t = |v: &str| CtestTest {
            name: "x".into(),
            command: vec![
                "-D".into(),
                "TEST_ENV_VAR=HDF5_PLUGIN_PATH".into(),
                "-D".into(),
                format!("TEST_ENV_VALUE={v}"),
            ],
            ..CtestTest::default()
        };
        let other = CtestTest {
            name: "y".into(),
            command: vec![
                "TEST_ENV_VAR=HDF5_VDS_PREFIX".into(),
                "TEST_ENV_VALUE=/vds".into(),
            ],
            ..CtestTest::default()
        };
        assert_eq!(
            tools_plugin_dirs(&[t("/b/plugins"), t("/b"), t("/b/plugins"), other]),
            ["/b", "/b/plugins"]
        );
    }
}

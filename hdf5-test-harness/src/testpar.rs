//! The `testpar` suite: HDF5's parallel test programs (`testpar/`) and the parallel API tests
//! (`testpar/API`, `h5_api_test_parallel <area>`) of a parallel build tree, each run under
//! `mpiexec -n 4` as ctest would run it.
//!
//! Pure helpers: selecting the tests from ctest's list, the CI subset, and the launcher
//! environment that lets OpenMPI run as root and with more ranks than cores.

use crate::ctest::CtestTest;
use crate::error::{Error, Result};
use crate::suites::DEFAULT_TIMEOUT_SECS;

/// Prefix of HDF5's `testpar/` ctest names (`MPI_TEST_t_mpi`, `MPI_TEST_testphdf5_cchunk1`).
pub const MPI_TEST_PREFIX: &str = "MPI_TEST_";
/// Prefix of the parallel API tests' ctest names (`h5_api_test_parallel_file`).
pub const API_PARALLEL_PREFIX: &str = "h5_api_test_parallel_";

/// The tests of the default (CI) subset, by the names [`testpar_tests`] gives them.
///
/// Chosen from native times at `-n 4` on 2 (busy) cores: everything that finishes in
/// seconds, which still covers collective and independent raw-data I/O (testphdf5's
/// chunked/contiguous sub-tests, `t_select_io_dset`, `t_shapesame`), collective metadata
/// (`MC_coll_MD_read`), file flush/restart/shutdown, the MPI-IO VFD and the parallel API tests:
/// about 25 s per mode. Left out, for `--testpar-full` (native times on a quiet machine):
/// `testphdf5` without `-o` (about 70 sub-tests, 49 s), `t_bigio` (168 s, a 4 GB sparse file),
/// `t_cache` (56 s), `t_filters_parallel` (46 s), `t_pmulti_dset` (fails natively here with
/// OpenMPI 4.1, a filter read error, then hangs until the 1200 s timeout), `t_2Gio`,
/// `t_subfiling_vfd` (skips itself: no subfiling VFD).
pub const CI_SUBSET: &[&str] = &[
    "testphdf5_cchunk1",
    "testphdf5_cchunk2",
    "testphdf5_cchunk3",
    "testphdf5_cchunk4",
    "testphdf5_ecdsetw",
    "testphdf5_eidsetw2",
    "testphdf5_selnone",
    "testphdf5_cngrpw-ingrpr",
    "testphdf5_cschunkw",
    "testphdf5_ccchunkw",
    "testphdf5_tldsc",
    "testphdf5_actualio",
    "testphdf5_MC_coll_MD_read",
    "t_mpi",
    "t_pflush1",
    "t_pflush2",
    "t_pread",
    "t_pshutdown",
    "t_prestart",
    "t_init_term",
    "t_select_io_dset",
    "t_shapesame",
    "t_vfd",
    "h5_api_test_parallel_attribute",
    "h5_api_test_parallel_dataset",
    "h5_api_test_parallel_datatype",
    "h5_api_test_parallel_file",
    "h5_api_test_parallel_group",
    "h5_api_test_parallel_link",
    "h5_api_test_parallel_misc",
    "h5_api_test_parallel_object",
];

/// One parallel test program run, as ctest would run it.
#[derive(Debug, Clone, PartialEq)]
pub struct ParTest {
    /// Name in results: the ctest name without `MPI_TEST_` (`t_mpi`, `testphdf5_cchunk1`,
    /// `h5_api_test_parallel_file`).
    pub name: String,
    /// The whole command, launcher first (`mpiexec -n 4 --oversubscribe <program> <args>`).
    pub command: Vec<String>,
    /// The working directory relative to `<build>/testpar` (`""` or `"API"`).
    pub subdir: String,
    /// ctest `ENVIRONMENT` (without `srcdir`, which the runner sets to its private copy).
    pub environment: Vec<(String, String)>,
    /// ctest `TIMEOUT`, or [`DEFAULT_TIMEOUT_SECS`].
    pub timeout: f64,
    /// ctest `WILL_FAIL`: a non-zero exit is the pass (`t_pflush1` exits without closing
    /// its file on purpose).
    pub will_fail: bool,
}

/// True when `arg` names an MPI launcher.
fn is_launcher(arg: &str) -> bool {
    let base = arg.rsplit('/').next().unwrap_or(arg);
    matches!(base, "mpiexec" | "mpirun" | "orterun" | "srun")
}

/// The enabled parallel tests of a build tree's ctest list, in ctest order: the
/// `MPI_TEST_*` programs that run in `<build>/testpar` and the `h5_api_test_parallel_*`
/// areas (in `<build>/testpar/API`). The cleanup entries (`cmake -E remove`) are left out,
/// as are the MPI tests of tools/ (h5diff, h5perf). `testpar_dir` is `<build>/testpar`.
pub fn testpar_tests(all: &[CtestTest], testpar_dir: &str) -> Result<Vec<ParTest>> {
    let mut out = Vec::new();
    for t in all.iter().filter(|t| !t.disabled) {
        let name = if let Some(n) = t.name.strip_prefix(MPI_TEST_PREFIX) {
            n.to_string()
        } else if t.name.starts_with(API_PARALLEL_PREFIX) {
            t.name.clone()
        } else {
            continue;
        };
        if !t.command.first().is_some_and(|c| is_launcher(c)) {
            continue;
        }
        let Some(wd) = t.working_dir.as_deref() else {
            continue;
        };
        let subdir = match wd.strip_prefix(testpar_dir) {
            Some(rest) if rest.is_empty() || rest.starts_with('/') => {
                rest.trim_start_matches('/').to_string()
            }
            _ => continue,
        };
        out.push(ParTest {
            name,
            command: t.command.clone(),
            subdir,
            environment: t
                .environment
                .iter()
                .filter(|(k, _)| k != "srcdir")
                .cloned()
                .collect(),
            timeout: t.timeout.unwrap_or(DEFAULT_TIMEOUT_SECS),
            will_fail: t.will_fail,
        });
    }
    if out.is_empty() {
        return Err(Error::new(format!(
            "no {MPI_TEST_PREFIX}* or {API_PARALLEL_PREFIX}* tests running in {testpar_dir} in the ctest list; \
             is this a parallel build (-DHDF5_ENABLE_PARALLEL=ON -DHDF5_TEST_PARALLEL=ON)? \
             Run `hdf5-test-harness build-hdf5 --variant parallel`"
        )));
    }
    Ok(out)
}

/// Keeps the tests of [`CI_SUBSET`] unless `full`. Fails when a subset name is missing from
/// the build (the subset would silently shrink otherwise).
pub fn select(tests: Vec<ParTest>, full: bool) -> Result<Vec<ParTest>> {
    if full {
        return Ok(tests);
    }
    let missing: Vec<&str> = CI_SUBSET
        .iter()
        .copied()
        .filter(|n| !tests.iter().any(|t| t.name == *n))
        .collect();
    if !missing.is_empty() {
        return Err(Error::new(format!(
            "the testpar CI subset names tests this build does not have: {} (update CI_SUBSET in hdf5-test-harness/src/testpar.rs, or use --testpar-full)",
            missing.join(", ")
        )));
    }
    Ok(tests
        .into_iter()
        .filter(|t| CI_SUBSET.contains(&t.name.as_str()))
        .collect())
}

/// True when a parallel test program that exited 0 skipped itself as a whole: it printed
/// no success marker (`PASSED`, `passed`, `successful`, `no errors`) and some skip marker
/// (`SKIPPED`, `-SKIP-`, `skipped`). testphdf5 run with `-o <sub-test>` lists all the other
/// sub-tests as `Skipping -- ...` and still counts as passed.
pub fn program_skipped(stdout: &str) -> bool {
    if ["PASSED", "passed", "successful", "no errors"]
        .iter()
        .any(|m| stdout.contains(m))
    {
        return false;
    }
    stdout.lines().any(|l| {
        let t = l.trim_start();
        t.starts_with("SKIPPED")
            || t.contains("-SKIP-")
            || t.to_ascii_lowercase().contains("skipped")
    })
}

/// The connector `h5_api_test_parallel` says it runs with, from its line
/// `Running parallel API tests with VOL connector '<name>' and info string '...'`: proof, from
/// inside the MPI job, that the mode's connector was loaded.
pub fn api_connector(stdout: &str) -> Option<&str> {
    stdout.lines().find_map(|l| {
        let rest = l
            .trim()
            .strip_prefix("Running parallel API tests with VOL connector '")?;
        rest.split_once('\'').map(|(name, _)| name)
    })
}

/// Environment for OpenMPI launchers (`mpiexec`/`mpirun`) on a small machine, unless the
/// user set the variable already:
/// - `OMPI_ALLOW_RUN_AS_ROOT=1` and `OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1` (containers and CI
///   run as root; mpirun refuses otherwise);
/// - `OMPI_MCA_rmaps_base_oversubscribe=1` (4 ranks on 2 cores);
/// - `OMPI_MCA_btl_vader_single_copy_mechanism=none` (shared-memory transfers without
///   CMA/ptrace, which containers forbid).
///
/// `is_set` looks up the current environment.
pub fn mpi_env(is_set: impl Fn(&str) -> bool) -> Vec<(String, String)> {
    [
        ("OMPI_ALLOW_RUN_AS_ROOT", "1"),
        ("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1"),
        ("OMPI_MCA_rmaps_base_oversubscribe", "1"),
        ("OMPI_MCA_btl_vader_single_copy_mechanism", "none"),
    ]
    .into_iter()
    .filter(|(k, _)| !is_set(k))
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(name: &str, cmd: &[&str], wd: &str) -> CtestTest {
        CtestTest {
            name: name.into(),
            command: cmd.iter().map(|s| s.to_string()).collect(),
            working_dir: Some(wd.into()),
            environment: vec![
                ("HDF5_ALARM_SECONDS".into(), "3600".into()),
                ("srcdir".into(), "/b/testpar".into()),
            ],
            ..CtestTest::default()
        }
    }

    #[test]
    fn selects_testpar_programs_and_api_areas() {
        let all = vec![
            t(
                "MPI_TEST-clear-objects",
                &["/usr/bin/cmake", "-E", "remove", "x.h5"],
                "/b/testpar",
            ),
            t(
                "MPI_TEST_t_mpi",
                &["/usr/bin/mpiexec", "-n", "4", "/b/bin/t_mpi"],
                "/b/testpar",
            ),
            t(
                "h5_api_test_parallel_file",
                &[
                    "/usr/bin/mpiexec",
                    "-n",
                    "4",
                    "/b/bin/h5_api_test_parallel",
                    "file",
                ],
                "/b/testpar/API",
            ),
            t(
                "MPI_TEST_H5DIFF-h5diff_10",
                &["/usr/bin/mpiexec", "-n", "4", "/b/bin/ph5diff"],
                "/b/tools/test/h5diff",
            ),
            t(
                "MPI_TEST_t_elsewhere",
                &["/usr/bin/mpiexec", "/b/bin/x"],
                "/b/testparx",
            ),
            t(
                "h5_api_test_file",
                &["/b/bin/h5_api_test", "file"],
                "/b/test/API",
            ),
        ];
        let v = testpar_tests(&all, "/b/testpar").unwrap();
        let names: Vec<_> = v.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["t_mpi", "h5_api_test_parallel_file"]);
        assert_eq!(v[0].subdir, "");
        assert_eq!(v[1].subdir, "API");
        assert_eq!(
            v[0].environment,
            [("HDF5_ALARM_SECONDS".to_string(), "3600".to_string())]
        );
        assert_eq!(v[0].timeout, DEFAULT_TIMEOUT_SECS);
        assert!(testpar_tests(&all[3..], "/b/testpar").is_err());
    }

    #[test]
    fn subset_and_missing_names() {
        let mk = |n: &str| ParTest {
            name: n.into(),
            command: vec![],
            subdir: String::new(),
            environment: vec![],
            timeout: 1.0,
            will_fail: false,
        };
        let mut all: Vec<ParTest> = CI_SUBSET.iter().map(|n| mk(n)).collect();
        all.push(mk("t_bigio"));
        assert_eq!(
            select(all.clone(), true).unwrap().len(),
            CI_SUBSET.len() + 1
        );
        let sub = select(all.clone(), false).unwrap();
        assert_eq!(sub.len(), CI_SUBSET.len());
        assert!(!sub.iter().any(|t| t.name == "t_bigio"));
        let err = select(all[1..].to_vec(), false).unwrap_err().to_string();
        assert!(err.contains(CI_SUBSET[0]), "{err}");
    }

    #[test]
    fn api_connector_line() {
        let out = "No VOL connector selected; using native VOL connector\n\
            Running parallel API tests with VOL connector 'h5prov' and info string 'under_vol=0'\n";
        assert_eq!(api_connector(out), Some("h5prov"));
        assert_eq!(api_connector("Testing x PASSED\n"), None);
    }

    #[test]
    fn skip_detection() {
        let one_subtest = "Skipping -- dataset collective write (cdsetw) \n\
            Testing  -- actual io mode (actualio) \n\
            All tests were successful. \n\
            PHDF5 tests finished with no errors\n";
        assert!(!program_skipped(one_subtest));
        assert!(program_skipped("SKIPPED - subfiling VFD not built\n"));
        assert!(program_skipped("Testing subfiling   -SKIP-\n"));
        assert!(!program_skipped("t_mpi: all done\n"));
    }

    #[test]
    fn launcher_environment_respects_the_user() {
        let all = mpi_env(|_| false);
        assert_eq!(all.len(), 4);
        let some = mpi_env(|k| k == "OMPI_ALLOW_RUN_AS_ROOT");
        assert_eq!(some.len(), 3);
        assert!(!some.iter().any(|(k, _)| k == "OMPI_ALLOW_RUN_AS_ROOT"));
    }
}

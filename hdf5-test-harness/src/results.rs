//! Per-test outcomes and the saved per-mode, per-suite results (`<out>/<mode>/<suite>.json`).

use crate::error::{Context, Error, Result};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// The outcome of one test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// The test passed.
    Passed,
    /// The test failed, crashed, timed out or printed no outcome.
    Failed,
    /// The test (or the whole program) reported that it skipped itself, or ctest did not
    /// run it because it is disabled.
    Skipped,
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Outcome::Passed => "passed",
            Outcome::Failed => "failed",
            Outcome::Skipped => "skipped",
        })
    }
}

/// One of HDF5's regression suites that the harness runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Suite {
    /// `test/API`: `h5_api_test <area>` for each area; per-test outcomes parsed from its output.
    Api,
    /// The `test/` executables of HDF5's pass-through-VOL ctest list (`VOL-vol_native-*`).
    Vol,
    /// The ctest tests under `tools/` (h5dump, h5ls, h5diff, h5repack, ...).
    Tools,
    /// Parallel builds only: the `testpar/` programs and the parallel API tests under
    /// `mpiexec -n 4` (see [`crate::testpar`]).
    Testpar,
}

impl Suite {
    /// The suites of a serial build (the default of `run`), in the order the harness runs them.
    pub const ALL: [Suite; 3] = [Suite::Api, Suite::Vol, Suite::Tools];
    /// Every suite, including those that need a parallel build.
    pub const EVERY: [Suite; 4] = [Suite::Api, Suite::Vol, Suite::Tools, Suite::Testpar];

    /// The suite's name as used on the command line and in file names.
    pub fn name(self) -> &'static str {
        match self {
            Suite::Api => "api",
            Suite::Vol => "vol",
            Suite::Tools => "tools",
            Suite::Testpar => "testpar",
        }
    }
}

impl fmt::Display for Suite {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Suite {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        Suite::EVERY
            .into_iter()
            .find(|suite| suite.name() == s)
            .ok_or_else(|| {
                Error::new(format!(
                    "unknown suite {s:?} (expected api, vol, tools or testpar)"
                ))
            })
    }
}

/// The outcome of one named test.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TestResult {
    /// The test's name, unique within its suite.
    pub name: String,
    /// What happened.
    pub outcome: Outcome,
    /// Why it failed or was skipped, when known (exit status, ctest's reason).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// Wall time, when measured per test.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seconds: Option<f64>,
}

impl TestResult {
    /// A result without detail or time.
    pub fn new(name: impl Into<String>, outcome: Outcome) -> Self {
        Self {
            name: name.into(),
            outcome,
            detail: None,
            seconds: None,
        }
    }
}

/// Counts of outcomes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    /// Number of passed tests.
    pub passed: usize,
    /// Number of failed tests.
    pub failed: usize,
    /// Number of skipped tests.
    pub skipped: usize,
}

impl Counts {
    /// Counts the outcomes of `tests`.
    pub fn of(tests: &[TestResult]) -> Self {
        let mut c = Counts::default();
        for t in tests {
            match t.outcome {
                Outcome::Passed => c.passed += 1,
                Outcome::Failed => c.failed += 1,
                Outcome::Skipped => c.skipped += 1,
            }
        }
        c
    }
}

impl fmt::Display for Counts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} passed, {} failed, {} skipped",
            self.passed, self.failed, self.skipped
        )
    }
}

/// What the VOL probe printed for a mode: the proof that the connector was really loaded.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ProbeRecord {
    /// The connector name the mode requires (first word of its connector string).
    pub expected: String,
    /// Name of the default FAPL's VOL connector.
    pub fapl_connector: String,
    /// Name of the VOL connector of a file created with the default FAPL.
    pub file_connector: String,
    /// The probe's complete standard output.
    pub output: String,
}

/// Version of the JSON layout of [`SuiteResult`].
pub const RESULT_FORMAT_VERSION: u32 = 1;

/// The saved result of one suite run in one mode.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SuiteResult {
    /// [`RESULT_FORMAT_VERSION`] when written.
    pub format_version: u32,
    /// The mode's label (`native`, `pass_through`, ...).
    pub mode: String,
    /// The `HDF5_VOL_CONNECTOR` string, or `None` for native (variable unset).
    pub connector: Option<String>,
    /// Which suite.
    pub suite: Suite,
    /// Identifies the HDF5 build the suite ran from; native results are reused only for
    /// the same build.
    pub build_id: String,
    /// The HDF5 build tree.
    pub build_dir: String,
    /// Start time, seconds since the Unix epoch.
    pub started_unix: u64,
    /// Wall time of the whole suite.
    pub seconds: f64,
    /// The VOL probe's output for this mode.
    pub probe: ProbeRecord,
    /// Per-test outcomes.
    pub tests: Vec<TestResult>,
    /// Problems with the run itself (a crashed program, ctest not completing).
    #[serde(default)]
    pub errors: Vec<String>,
    /// What the traced processes wrote (modes through h5prov).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub traces: Option<crate::traces::TraceTally>,
}

impl SuiteResult {
    /// Counts of this run's outcomes.
    pub fn counts(&self) -> Counts {
        Counts::of(&self.tests)
    }

    /// The summary line `<label>: N passed, M failed, K skipped`.
    pub fn summary_line(&self, label: &str) -> String {
        format!("{label}: {}", self.counts())
    }

    /// Where a result for `mode`/`suite` is stored under `out`.
    pub fn path(out: &Path, mode: &str, suite: Suite) -> PathBuf {
        out.join(mode).join(format!("{suite}.json"))
    }

    /// Writes the result as pretty JSON to `path`, creating parent directories.
    pub fn save(&self, path: &Path) -> Result<()> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).context(|| format!("creating {}", dir.display()))?;
        }
        let json = serde_json::to_string_pretty(self)
            .context(|| format!("serialising results for {}", path.display()))?;
        std::fs::write(path, json + "\n").context(|| format!("writing {}", path.display()))
    }

    /// Reads a result written by [`SuiteResult::save`].
    pub fn load(path: &Path) -> Result<Self> {
        let text =
            std::fs::read_to_string(path).context(|| format!("reading {}", path.display()))?;
        let result: SuiteResult =
            serde_json::from_str(&text).context(|| format!("parsing {}", path.display()))?;
        if result.format_version != RESULT_FORMAT_VERSION {
            return Err(Error::new(format!(
                "{}: result format version {} (this harness writes {}); re-run the suite",
                path.display(),
                result.format_version,
                RESULT_FORMAT_VERSION
            )));
        }
        Ok(result)
    }
}

/// Makes test names unique by appending ` [2]`, ` [3]`, ... to repeats, in order.
pub fn dedup_names(tests: &mut [TestResult]) {
    let mut seen = std::collections::HashMap::<String, usize>::new();
    for t in tests.iter_mut() {
        let n = seen.entry(t.name.clone()).or_insert(0);
        *n += 1;
        if *n > 1 {
            t.name = format!("{} [{}]", t.name, n);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_summary_line() {
        let tests = vec![
            TestResult::new("a", Outcome::Passed),
            TestResult::new("b", Outcome::Passed),
            TestResult::new("c", Outcome::Skipped),
            TestResult::new("d", Outcome::Failed),
        ];
        let c = Counts::of(&tests);
        assert_eq!(c.to_string(), "2 passed, 1 failed, 1 skipped");
    }

    #[test]
    fn dedup_appends_ordinals() {
        let mut tests = vec![
            TestResult::new("x", Outcome::Passed),
            TestResult::new("y", Outcome::Passed),
            TestResult::new("x", Outcome::Failed),
            TestResult::new("x", Outcome::Passed),
        ];
        dedup_names(&mut tests);
        let names: Vec<_> = tests.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["x", "y", "x [2]", "x [3]"]);
    }

    #[test]
    fn suite_names_round_trip() {
        for s in Suite::EVERY {
            assert_eq!(s.name().parse::<Suite>().unwrap(), s);
        }
        assert!("unit".parse::<Suite>().is_err());
    }

    #[test]
    fn json_round_trip() {
        let r = SuiteResult {
            format_version: RESULT_FORMAT_VERSION,
            mode: "pass_through".into(),
            connector: Some("pass_through under_vol=0;under_info={}".into()),
            suite: Suite::Vol,
            build_id: "b".into(),
            build_dir: "/b".into(),
            started_unix: 1,
            seconds: 2.5,
            probe: ProbeRecord::default(),
            tests: vec![TestResult {
                name: "dsets".into(),
                outcome: Outcome::Failed,
                detail: Some("exit status 1".into()),
                seconds: Some(1.0),
            }],
            errors: vec![],
            traces: Some(crate::traces::TraceTally {
                processes: 3,
                records: 10,
                ..Default::default()
            }),
        };
        let json = serde_json::to_string(&r).unwrap();
        assert!(json.contains("\"outcome\":\"failed\""), "{json}");
        let back: SuiteResult = serde_json::from_str(&json).unwrap();
        assert_eq!(back, r);
    }
}

//! Compares a mode's results with the native baseline.

use crate::expected::ExpectedDifferences;
use crate::results::{Outcome, Suite, SuiteResult};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

/// How a test's outcome through a connector relates to native.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    /// Did not fail natively, fails (or is missing) through the connector: makes the run fail.
    Regression,
    /// A regression listed in the expected-differences file.
    Expected,
    /// Fails natively, passes through the connector (informational).
    Improvement,
    /// Any other change, e.g. passed natively and skipped through the connector, or a test
    /// that only exists in one run (informational).
    Other,
}

/// One test whose outcome differs from native.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    /// The suite.
    pub suite: Suite,
    /// The test's name.
    pub test: String,
    /// Native outcome (`None`: not in the native results).
    pub native: Option<Outcome>,
    /// Outcome through the connector (`None`: missing, e.g. the program crashed first).
    pub mode: Option<Outcome>,
    /// Classification.
    pub kind: Kind,
    /// The connector run's detail (exit status, ctest status), if any.
    pub detail: Option<String>,
    /// For [`Kind::Expected`]: the entry's reason and line.
    pub expected_reason: Option<String>,
}

/// The comparison of one suite in one mode against native.
#[derive(Debug, Clone, PartialEq)]
pub struct SuiteDiff {
    /// The mode's label.
    pub mode: String,
    /// The suite.
    pub suite: Suite,
    /// Differing tests, sorted by kind then name.
    pub changes: Vec<Change>,
    /// Expected-difference entries matching this mode and suite that did not occur.
    pub unused_expected: Vec<String>,
}

impl SuiteDiff {
    /// Number of unexpected regressions.
    pub fn regressions(&self) -> usize {
        self.changes
            .iter()
            .filter(|c| c.kind == Kind::Regression)
            .count()
    }
}

fn show(o: Option<Outcome>) -> String {
    o.map_or_else(|| "missing".to_string(), |o| o.to_string())
}

/// Compares `mode` with `native` for one suite.
pub fn diff_suite(
    native: &SuiteResult,
    mode: &SuiteResult,
    expected: &ExpectedDifferences,
) -> SuiteDiff {
    let native_map: BTreeMap<&str, Outcome> = native
        .tests
        .iter()
        .map(|t| (t.name.as_str(), t.outcome))
        .collect();
    let mode_map: BTreeMap<&str, (Outcome, Option<&String>)> = mode
        .tests
        .iter()
        .map(|t| (t.name.as_str(), (t.outcome, t.detail.as_ref())))
        .collect();
    let names: BTreeSet<&str> = native_map.keys().chain(mode_map.keys()).copied().collect();
    let mut changes = Vec::new();
    let mut used_lines = BTreeSet::new();
    for name in names {
        let n = native_map.get(name).copied();
        let (m, detail) = match mode_map.get(name) {
            Some((o, d)) => (Some(*o), d.cloned()),
            None => (None, None),
        };
        if n == m {
            continue;
        }
        let regression = matches!(n, Some(Outcome::Passed | Outcome::Skipped))
            && matches!(m, None | Some(Outcome::Failed));
        let mut kind = if regression {
            Kind::Regression
        } else if n == Some(Outcome::Failed) && m == Some(Outcome::Passed) {
            Kind::Improvement
        } else {
            Kind::Other
        };
        let mut expected_reason = None;
        if kind == Kind::Regression {
            if let Some(e) = expected.lookup(&mode.mode, mode.suite, name) {
                kind = Kind::Expected;
                used_lines.insert(e.line);
                expected_reason = Some(format!(
                    "{} (expected-differences line {})",
                    e.reason, e.line
                ));
            }
        }
        changes.push(Change {
            suite: mode.suite,
            test: name.to_string(),
            native: n,
            mode: m,
            kind,
            detail,
            expected_reason,
        });
    }
    changes.sort_by(|a, b| (a.kind, &a.test).cmp(&(b.kind, &b.test)));
    let unused_expected = expected
        .entries
        .iter()
        .filter(|e| {
            e.suite == mode.suite
                && crate::expected::glob_match(&e.mode_pattern, &mode.mode)
                && !used_lines.contains(&e.line)
        })
        .map(|e| format!("line {}: {} {} {}", e.line, e.mode_pattern, e.suite, e.test))
        .collect();
    SuiteDiff {
        mode: mode.mode.clone(),
        suite: mode.suite,
        changes,
        unused_expected,
    }
}

/// Renders a suite diff as indented text (empty when nothing differs), listing at most
/// `max_listed` tests per kind of change.
pub fn render(diff: &SuiteDiff, max_listed: usize) -> String {
    let mut out = String::new();
    if diff.changes.is_empty() && diff.unused_expected.is_empty() {
        return out;
    }
    let _ = writeln!(
        out,
        "{}/{}: differences from native:",
        diff.mode, diff.suite
    );
    for (kind, title) in [
        (
            Kind::Regression,
            "REGRESSIONS (did not fail natively, fail through the connector)",
        ),
        (
            Kind::Expected,
            "expected differences (listed in expected-differences.txt)",
        ),
        (
            Kind::Improvement,
            "informational: fail natively, pass through the connector",
        ),
        (Kind::Other, "informational: other changes"),
    ] {
        let items: Vec<&Change> = diff.changes.iter().filter(|c| c.kind == kind).collect();
        if items.is_empty() {
            continue;
        }
        let _ = writeln!(out, "  {title}: {}", items.len());
        let total = items.len();
        for c in items.into_iter().take(max_listed) {
            let _ = write!(
                out,
                "    {}  (native: {}, {}: {})",
                c.test,
                show(c.native),
                diff.mode,
                show(c.mode)
            );
            if let Some(d) = &c.detail {
                let _ = write!(out, " [{d}]");
            }
            if let Some(r) = &c.expected_reason {
                let _ = write!(out, " -- {r}");
            }
            out.push('\n');
        }
        if total > max_listed {
            let _ = writeln!(
                out,
                "    ... and {} more (all: `hdf5-test-harness diff --mode {} --max-listed {total}`)",
                total - max_listed,
                diff.mode
            );
        }
    }
    if !diff.unused_expected.is_empty() {
        let _ = writeln!(
            out,
            "  informational: expected-differences entries that did not occur (remove them?): {}",
            diff.unused_expected.len()
        );
        for e in &diff.unused_expected {
            let _ = writeln!(out, "    {e}");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::{ProbeRecord, TestResult, RESULT_FORMAT_VERSION};

    fn result(mode: &str, tests: &[(&str, Outcome)]) -> SuiteResult {
        SuiteResult {
            format_version: RESULT_FORMAT_VERSION,
            mode: mode.into(),
            connector: None,
            suite: Suite::Tools,
            build_id: "b".into(),
            build_dir: "/b".into(),
            started_unix: 0,
            seconds: 0.0,
            probe: ProbeRecord::default(),
            tests: tests.iter().map(|(n, o)| TestResult::new(*n, *o)).collect(),
            errors: vec![],
            traces: None,
        }
    }

    #[test]
    fn classifies_changes() {
        use Outcome::*;
        let native = result(
            "native",
            &[
                ("same", Passed),
                ("regr", Passed),
                ("gone", Passed),
                ("fixed", Failed),
                ("skip", Passed),
                ("exp", Passed),
                ("sk2f", Skipped),
            ],
        );
        let mode = result(
            "pass_through",
            &[
                ("same", Passed),
                ("regr", Failed),
                ("fixed", Passed),
                ("skip", Skipped),
                ("exp", Failed),
                ("new", Passed),
                ("sk2f", Failed),
            ],
        );
        let expected = ExpectedDifferences::parse(
            "pass_* tools exp # shared with pass_through\n* tools never-happens # stale\nh5prov tools regr # other mode\n",
            "e",
        )
        .unwrap();
        let d = diff_suite(&native, &mode, &expected);
        let got: Vec<(&str, Kind)> = d
            .changes
            .iter()
            .map(|c| (c.test.as_str(), c.kind))
            .collect();
        assert_eq!(
            got,
            [
                ("gone", Kind::Regression),
                ("regr", Kind::Regression),
                ("sk2f", Kind::Regression),
                ("exp", Kind::Expected),
                ("fixed", Kind::Improvement),
                ("new", Kind::Other),
                ("skip", Kind::Other),
            ]
        );
        assert_eq!(d.regressions(), 3);
        assert_eq!(d.unused_expected, ["line 2: * tools never-happens"]);
        let text = render(&d, 100);
        assert!(text.contains("REGRESSIONS"), "{text}");
        assert!(
            text.contains("    gone  (native: passed, pass_through: missing)"),
            "{text}"
        );
        assert!(
            text.contains("shared with pass_through (expected-differences line 1)"),
            "{text}"
        );
        let short = render(&d, 1);
        assert!(short.contains("... and 2 more"), "{short}");
    }

    #[test]
    fn identical_runs_render_nothing() {
        let a = result("native", &[("x", Outcome::Passed)]);
        let b = result("pass_through", &[("x", Outcome::Passed)]);
        let d = diff_suite(&a, &b, &ExpectedDifferences::default());
        assert!(d.changes.is_empty());
        assert_eq!(render(&d, 100), "");
    }
}

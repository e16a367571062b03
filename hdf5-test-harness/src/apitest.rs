//! Parses the output of HDF5's API test program `h5_api_test` (`test/API`).
//!
//! The program prints, through the `TESTING`/`TESTING_2`/`TESTING_MULTIPART` and
//! `PASSED`/`H5_FAILED`/`SKIPPED` macros of `test/h5test.h`:
//!
//! ```text
//! Testing H5Fcreate                                                      PASSED
//! Testing H5Fcreate with invalid parameters
//!   Testing H5Fcreate with invalid file name                             PASSED
//! Testing H5Dread                                                        ...progress... PASSED
//! Testing something                                                     *FAILED*
//!     at H5_api_file_test.c:123 in test_something()...
//! 1074/1135 (94.63%) API tests passed with VOL connector 'native'
//! ```
//!
//! An unindented `Testing` line without an outcome followed by indented `Testing` lines is
//! the header of a multi-part test; its parts are named `<header> > <part>`. An outcome printed
//! on a line of its own after the parts is the whole multi-part test's (named `<header>`). The outcome of a
//! single test may arrive at the end of a later line when the test prints progress. A test
//! whose outcome never arrives counts as failed.

use crate::results::{dedup_names, Outcome, TestResult};

/// The totals `h5_api_test` prints at its end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ApiTotals {
    /// `N/total ... API tests passed`.
    pub passed: usize,
    /// `N/total ... API tests did not pass`.
    pub failed: usize,
    /// `N/total ... API tests were skipped`.
    pub skipped: usize,
    /// The `total` of those lines (HDF5's count of `TESTING` calls).
    pub run: usize,
}

/// What was parsed from one `h5_api_test` run.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiRun {
    /// Per-test outcomes, names prefixed with `<area>: `, unique.
    pub tests: Vec<TestResult>,
    /// The totals lines, if the program got that far.
    pub totals: Option<ApiTotals>,
    /// The connector name in `Running API tests with VOL connector '<name>'`.
    pub connector: Option<String>,
    /// `PASSED`/`-SKIP-` markers that belonged to no `Testing` line (HDF5 prints a few; they
    /// are not tests). A stray `*FAILED*` is kept as a failed test instead.
    pub stray_outcomes: usize,
}

fn split_outcome(text: &str) -> (&str, Option<Outcome>) {
    let t = text.trim_end();
    for (marker, outcome) in [
        ("PASSED", Outcome::Passed),
        ("-SKIP-", Outcome::Skipped),
        ("*FAILED*", Outcome::Failed),
    ] {
        if let Some(rest) = t.strip_suffix(marker) {
            return (rest, Some(outcome));
        }
    }
    (t, None)
}

fn quoted_after<'a>(line: &'a str, prefix: &str) -> Option<&'a str> {
    let rest = line.strip_prefix(prefix)?;
    let rest = rest.strip_prefix('\'')?;
    Some(&rest[..rest.find('\'')?])
}

fn totals_line(line: &str) -> Option<(&'static str, usize, usize)> {
    let (count, rest) = line.split_once('/')?;
    let count: usize = count.trim().parse().ok()?;
    let (total, rest) = rest.split_once(' ')?;
    let total: usize = total.parse().ok()?;
    let kind = if rest.contains("API tests passed") {
        "passed"
    } else if rest.contains("API tests did not pass") {
        "failed"
    } else if rest.contains("API tests were skipped") {
        "skipped"
    } else {
        return None;
    };
    Some((kind, count, total))
}

struct Pending {
    name: String,
    indented: bool,
}

/// Parses the standard output of `h5_api_test <area>`.
pub fn parse_api_output(area: &str, stdout: &str) -> ApiRun {
    let mut tests = Vec::new();
    let mut header: Option<String> = None;
    let mut pending: Option<Pending> = None;
    let mut stray = 0;
    let mut connector = None;
    let (mut passed, mut failed, mut skipped, mut run) = (None, None, None, None);

    let full_name = |header: &Option<String>, indented: bool, name: &str| match header {
        Some(h) if indented => format!("{area}: {h} > {name}"),
        _ => format!("{area}: {name}"),
    };
    let no_outcome = |name: String| TestResult {
        name,
        outcome: Outcome::Failed,
        detail: Some("no outcome printed".into()),
        seconds: None,
    };

    for line in stdout.lines() {
        let testing = if let Some(body) = line.strip_prefix("  Testing ") {
            Some((true, body))
        } else {
            line.strip_prefix("Testing ").map(|body| (false, body))
        };
        if let Some((indented, body)) = testing {
            if let Some(p) = pending.take() {
                if !p.indented && indented {
                    header = Some(p.name);
                } else {
                    tests.push(no_outcome(full_name(&header, p.indented, &p.name)));
                }
            }
            if !indented {
                // A new top-level test ends the previous multi-part test. This line becomes a
                // header itself when an indented part follows it without an outcome between.
                header = None;
            }
            let (name, outcome) = split_outcome(body);
            let name = name.trim();
            match outcome {
                Some(outcome) => {
                    tests.push(TestResult::new(full_name(&header, indented, name), outcome))
                }
                None => {
                    pending = Some(Pending {
                        name: name.to_string(),
                        indented,
                    })
                }
            }
            continue;
        }
        if let Some(name) = quoted_after(line, "Running API tests with VOL connector ") {
            connector = Some(name.to_string());
            continue;
        }
        if let Some((kind, count, total)) = totals_line(line) {
            run = Some(total);
            match kind {
                "passed" => passed = Some(count),
                "failed" => failed = Some(count),
                _ => skipped = Some(count),
            }
            continue;
        }
        if let (_, Some(outcome)) = split_outcome(line) {
            match pending.take() {
                Some(p) => tests.push(TestResult::new(
                    full_name(&header, p.indented, &p.name),
                    outcome,
                )),
                // Some multi-part tests print an outcome for the whole test after their parts
                // (HDF5 counts it): it belongs to the header.
                None if header.is_some() => tests.push(TestResult::new(
                    full_name(&None, false, header.as_deref().unwrap_or("")),
                    outcome,
                )),
                None if outcome == Outcome::Failed => {
                    // A failure outside any `Testing` line (e.g. in a test's cleanup) must not
                    // be lost: attribute it to the test printed last.
                    let after = tests
                        .last()
                        .map_or("the start", |t: &TestResult| t.name.as_str());
                    let mut t = TestResult::new(
                        format!("{area}: *FAILED* after '{after}'"),
                        Outcome::Failed,
                    );
                    t.detail = Some("failure printed outside a Testing line".into());
                    tests.push(t);
                }
                None => stray += 1,
            }
        }
    }
    if let Some(p) = pending.take() {
        let mut t = no_outcome(full_name(&header, p.indented, &p.name));
        t.detail = Some("no outcome printed before the program ended".into());
        tests.push(t);
    }
    dedup_names(&mut tests);
    let totals = match (passed, failed, skipped, run) {
        (Some(passed), Some(failed), Some(skipped), Some(run)) => Some(ApiTotals {
            passed,
            failed,
            skipped,
            run,
        }),
        _ => None,
    };
    ApiRun {
        tests,
        totals,
        connector,
        stray_outcomes: stray,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::Counts;

    const SAMPLE: &str = "\
No VOL connector selected; using native VOL connector
Running API tests with VOL connector 'native' and info string ''

Test parameters:
  - Test file name: 'H5_api_test.h5'

    created container group for File tests
**********************************************
*               API File Tests               *
**********************************************

Testing H5Fcreate                                                      PASSED
Testing H5Fcreate with invalid parameters                             
  Testing H5Fcreate with invalid file name                             PASSED
  Testing H5Fcreate with invalid flags                                -SKIP-
  Testing test setup                                                   PASSED
Testing H5Fflush                                                      
  Testing test setup                                                   PASSED
  Testing file flushing at local scope                                *FAILED*
    at H5_api_file_test.c:100 in test_flush()...
 PASSED
Testing H5Dread with progress                                         
 1/3 2/3 3/3 PASSED
Testing dataset creation by path with leading '.' from non-root group PASSED
Testing something that crashed half-way                               *FAILED*
 PASSED
 *FAILED*
Testing H5Oflush with invalid parameters                               -SKIP-

Cleaning up testing files
5/9 (55.56%) API tests passed with VOL connector 'native'
2/9 (22.22%) API tests did not pass with VOL connector 'native'
2/9 (22.22%) API tests were skipped with VOL connector 'native'
";

    #[test]
    fn parses_single_multipart_and_progress_tests() {
        let run = parse_api_output("file", SAMPLE);
        let got: Vec<(String, Outcome)> = run
            .tests
            .iter()
            .map(|t| (t.name.clone(), t.outcome))
            .collect();
        let want = [
            ("file: H5Fcreate", Outcome::Passed),
            (
                "file: H5Fcreate with invalid parameters > H5Fcreate with invalid file name",
                Outcome::Passed,
            ),
            (
                "file: H5Fcreate with invalid parameters > H5Fcreate with invalid flags",
                Outcome::Skipped,
            ),
            (
                "file: H5Fcreate with invalid parameters > test setup",
                Outcome::Passed,
            ),
            ("file: H5Fflush > test setup", Outcome::Passed),
            (
                "file: H5Fflush > file flushing at local scope",
                Outcome::Failed,
            ),
            ("file: H5Fflush", Outcome::Passed),
            ("file: H5Dread with progress", Outcome::Passed),
            (
                "file: dataset creation by path with leading '.' from non-root group",
                Outcome::Passed,
            ),
            ("file: something that crashed half-way", Outcome::Failed),
            (
                "file: *FAILED* after 'file: something that crashed half-way'",
                Outcome::Failed,
            ),
            ("file: H5Oflush with invalid parameters", Outcome::Skipped),
        ];
        let want: Vec<(String, Outcome)> = want.iter().map(|(n, o)| (n.to_string(), *o)).collect();
        assert_eq!(got, want);
        assert_eq!(run.stray_outcomes, 1);
        assert_eq!(run.connector.as_deref(), Some("native"));
        assert_eq!(
            run.totals,
            Some(ApiTotals {
                passed: 5,
                failed: 2,
                skipped: 2,
                run: 9
            })
        );
        let c = Counts::of(&run.tests);
        assert_eq!((c.passed, c.failed, c.skipped), (7, 3, 2));
    }

    #[test]
    fn missing_outcomes_are_failures() {
        let text = "Testing A                 \nTesting B               PASSED\n  Testing orphan part\nTesting crashed here";
        let run = parse_api_output("misc", text);
        let got: Vec<(&str, Outcome, Option<&str>)> = run
            .tests
            .iter()
            .map(|t| (t.name.as_str(), t.outcome, t.detail.as_deref()))
            .collect();
        assert_eq!(
            got,
            [
                ("misc: A", Outcome::Failed, Some("no outcome printed")),
                ("misc: B", Outcome::Passed, None),
                (
                    "misc: orphan part",
                    Outcome::Failed,
                    Some("no outcome printed")
                ),
                (
                    "misc: crashed here",
                    Outcome::Failed,
                    Some("no outcome printed before the program ended")
                ),
            ]
        );
        assert_eq!(run.totals, None);
    }

    #[test]
    fn repeated_names_stay_unique() {
        let text =
            "Testing X\n  Testing test setup PASSED\nTesting X\n  Testing test setup PASSED\n";
        let run = parse_api_output("group", text);
        let names: Vec<&str> = run.tests.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(
            names,
            ["group: X > test setup", "group: X > test setup [2]"]
        );
    }

    #[test]
    fn reports_connector_name() {
        let run = parse_api_output(
            "file",
            "Running API tests with VOL connector 'pass_through' and info string 'under_vol=0;under_info={}'\n",
        );
        assert_eq!(run.connector.as_deref(), Some("pass_through"));
    }
}

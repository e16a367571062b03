//! Reads ctest's test list (`ctest --show-only=json-v1`) and its progress output.

use crate::error::{Context, Error, Result};
use crate::results::Outcome;
use serde_json::Value;

/// One test as ctest describes it in `--show-only=json-v1`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CtestTest {
    /// The test's name (`VOL-vol_native-dsets`, `H5DUMP-tgroup`, ...).
    pub name: String,
    /// Its command line, program first.
    pub command: Vec<String>,
    /// `WORKING_DIRECTORY`, if set.
    pub working_dir: Option<String>,
    /// `ENVIRONMENT` entries as `(name, value)`.
    pub environment: Vec<(String, String)>,
    /// `TIMEOUT` in seconds, if set.
    pub timeout: Option<f64>,
    /// `DEPENDS`: tests that must run before this one.
    pub depends: Vec<String>,
    /// `DISABLED`.
    pub disabled: bool,
    /// `WILL_FAIL`: the test passes when its command fails (testpar's `t_pflush1`).
    pub will_fail: bool,
}

impl CtestTest {
    /// The value of a `-D KEY=value` or `-D KEY:TYPE=value` argument of a `cmake -P` command.
    pub fn cmake_define(&self, key: &str) -> Option<&str> {
        self.command.iter().find_map(|arg| {
            let (lhs, value) = arg.split_once('=')?;
            let name = lhs.split_once(':').map_or(lhs, |(n, _)| n);
            (name == key).then_some(value)
        })
    }
}

fn strings(v: &Value) -> Vec<String> {
    match v {
        Value::Array(items) => items
            .iter()
            .filter_map(|i| i.as_str().map(str::to_string))
            .collect(),
        Value::String(s) => vec![s.clone()],
        _ => Vec::new(),
    }
}

/// Parses the output of `ctest --show-only=json-v1`. `source` names it in errors.
pub fn parse_show_only_json(text: &str, source: &str) -> Result<Vec<CtestTest>> {
    let root: Value =
        serde_json::from_str(text).context(|| format!("parsing ctest JSON from {source}"))?;
    let major = root.pointer("/version/major").and_then(Value::as_u64);
    if major != Some(1) {
        return Err(Error::new(format!(
            "{source}: unsupported ctest JSON version {:?} (expected major 1)",
            root.get("version")
        )));
    }
    let tests = root
        .get("tests")
        .and_then(Value::as_array)
        .ok_or_else(|| Error::new(format!("{source}: no \"tests\" array in ctest JSON")))?;
    let mut out = Vec::with_capacity(tests.len());
    for (i, t) in tests.iter().enumerate() {
        let name = t
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| Error::new(format!("{source}: test #{} has no name", i + 1)))?;
        let mut test = CtestTest {
            name: name.to_string(),
            command: t.get("command").map(strings).unwrap_or_default(),
            ..CtestTest::default()
        };
        for p in t
            .get("properties")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let value = p.get("value").unwrap_or(&Value::Null);
            match p.get("name").and_then(Value::as_str) {
                Some("WORKING_DIRECTORY") => test.working_dir = value.as_str().map(str::to_string),
                Some("ENVIRONMENT") => {
                    test.environment = strings(value)
                        .into_iter()
                        .map(|kv| match kv.split_once('=') {
                            Some((k, v)) => (k.to_string(), v.to_string()),
                            None => (kv, String::new()),
                        })
                        .collect()
                }
                Some("TIMEOUT") => test.timeout = value.as_f64(),
                Some("DEPENDS") => test.depends = strings(value),
                Some("DISABLED") => test.disabled = value.as_bool().unwrap_or(false),
                Some("WILL_FAIL") => test.will_fail = value.as_bool().unwrap_or(false),
                _ => {}
            }
        }
        out.push(test);
    }
    Ok(out)
}

/// One `N/M Test #K: name .... Passed 0.01 sec` line of ctest's progress output.
#[derive(Debug, Clone, PartialEq)]
pub struct ProgressLine {
    /// ctest's test number `#K` (1-based index into the `--show-only` list of the same directory).
    pub number: usize,
    /// The test name as printed (dots removed).
    pub name: String,
    /// Passed, failed, or skipped (`Not Run (Disabled)` and `Skipped`).
    pub outcome: Outcome,
    /// ctest's status text for anything but `Passed` (`Failed`, `Timeout`, `Exception: SegFault`, ...).
    pub detail: Option<String>,
    /// The time ctest printed.
    pub seconds: Option<f64>,
}

/// Parses one line of ctest's progress output; `None` for any other line.
pub fn parse_progress_line(line: &str) -> Option<ProgressLine> {
    let line = line.trim();
    // "[N/M ]Test  #K: rest"
    let after_test = match line.find("Test ") {
        Some(pos) if pos == 0 || line[..pos].trim_end().contains('/') => &line[pos + 5..],
        _ => return None,
    };
    let after_test = after_test.trim_start().strip_prefix('#')?;
    let (number, rest) = after_test.split_once(':')?;
    let number: usize = number.trim().parse().ok()?;
    let rest = rest.strip_prefix(' ')?;

    let (name_part, status) = if let Some(pos) = rest.find("***") {
        (&rest[..pos], &rest[pos + 3..])
    } else {
        let pos = rest.rfind(" Passed")?;
        (&rest[..pos], rest[pos..].trim_start())
    };
    let name = name_part
        .trim_end()
        .trim_end_matches('.')
        .trim_end()
        .to_string();
    if name.is_empty() {
        return None;
    }
    // Status: "<words...> <seconds> sec".
    let status = status.trim();
    let (words, seconds) = match status.strip_suffix("sec") {
        Some(s) => {
            let s = s.trim_end();
            match s.rsplit_once(char::is_whitespace) {
                Some((words, secs)) => match secs.parse::<f64>() {
                    Ok(v) => (words.trim(), Some(v)),
                    Err(_) => (s, None),
                },
                None => (s, None),
            }
        }
        None => (status, None),
    };
    let (outcome, detail) = if words == "Passed" {
        (Outcome::Passed, None)
    } else if words.starts_with("Not Run (Disabled)") {
        (Outcome::Skipped, Some("disabled".to_string()))
    } else if words.starts_with("Skipped") {
        (Outcome::Skipped, Some(words.to_string()))
    } else {
        (Outcome::Failed, Some(words.to_string()))
    };
    Some(ProgressLine {
        number,
        name,
        outcome,
        detail,
        seconds,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const JSON: &str = r#"{
 "backtraceGraph": {"commands": [], "files": [], "nodes": []},
 "kind": "ctestInfo",
 "version": {"major": 1, "minor": 0},
 "tests": [
  {"backtrace": 443,
   "command": ["/usr/bin/cmake", "-D", "TEST_EMULATOR=", "-D", "TEST_PROGRAM=/b/bin/flush2",
               "-D", "TEST_ARGS:STRING=", "-D", "TEST_VOL:STRING=native", "-D", "TEST_EXPECT=0",
               "-D", "TEST_OUTPUT=vol_native-flush2.out", "-D", "TEST_FOLDER=/b/test/vol_native",
               "-P", "/s/config/cmake/volTest.cmake"],
   "name": "VOL-vol_native-flush2",
   "properties": [
     {"name": "DEPENDS", "value": ["VOL-vol_native-flush1"]},
     {"name": "ENVIRONMENT", "value": ["srcdir=/b/test/vol_native"]},
     {"name": "TIMEOUT", "value": 10.0},
     {"name": "WORKING_DIRECTORY", "value": "/b/test/vol_native"}]},
  {"name": "H5REPACK-szip_copy", "command": ["/b/bin/h5repack"],
   "properties": [{"name": "DISABLED", "value": true}]},
  {"name": "NOT_AVAILABLE"}
 ]
}"#;

    #[test]
    fn parses_ctest_json() {
        let tests = parse_show_only_json(JSON, "ctest").unwrap();
        assert_eq!(tests.len(), 3);
        let t = &tests[0];
        assert_eq!(t.name, "VOL-vol_native-flush2");
        assert_eq!(t.cmake_define("TEST_PROGRAM"), Some("/b/bin/flush2"));
        assert_eq!(t.cmake_define("TEST_ARGS"), Some(""));
        assert_eq!(t.cmake_define("TEST_VOL"), Some("native"));
        assert_eq!(t.cmake_define("TEST_EXPECT"), Some("0"));
        assert_eq!(t.cmake_define("NOPE"), None);
        assert_eq!(t.depends, ["VOL-vol_native-flush1"]);
        assert_eq!(
            t.environment,
            [("srcdir".to_string(), "/b/test/vol_native".to_string())]
        );
        assert_eq!(t.timeout, Some(10.0));
        assert_eq!(t.working_dir.as_deref(), Some("/b/test/vol_native"));
        assert!(!t.disabled);
        assert!(tests[1].disabled);
        assert!(tests[2].command.is_empty());
    }

    #[test]
    fn rejects_other_json() {
        let err = parse_show_only_json(r#"{"version": {"major": 2}}"#, "x.json")
            .unwrap_err()
            .to_string();
        assert!(err.contains("x.json"), "{err}");
        assert!(parse_show_only_json("not json", "y").is_err());
    }

    #[test]
    fn parses_progress_lines() {
        let p = parse_progress_line(
            "   4/2116 Test  #278: H5CLEAR_CMP-h5clr_usage_h ..........................   Passed    0.10 sec",
        )
        .unwrap();
        assert_eq!(
            (p.number, p.name.as_str(), p.outcome, p.seconds),
            (
                278,
                "H5CLEAR_CMP-h5clr_usage_h",
                Outcome::Passed,
                Some(0.10)
            )
        );
        assert_eq!(p.detail, None);

        let p = parse_progress_line(
            "1481/2116 Test  #581: H5REPACK-szip_individual ...........***Not Run (Disabled)   0.00 sec",
        )
        .unwrap();
        assert_eq!(
            (p.number, p.outcome, p.detail.as_deref()),
            (581, Outcome::Skipped, Some("disabled"))
        );

        let p =
            parse_progress_line("12/100 Test  #12: H5DUMP-tall.h5 ..........***Failed    0.05 sec")
                .unwrap();
        assert_eq!(
            (p.name.as_str(), p.outcome, p.detail.as_deref()),
            ("H5DUMP-tall.h5", Outcome::Failed, Some("Failed"))
        );

        let p = parse_progress_line(
            "12/100 Test  #12: foo ...***Failed  Required regular expression not found. Regex=[PASSED\n]  0.05 sec",
        )
        .unwrap();
        assert_eq!(p.outcome, Outcome::Failed);

        let p = parse_progress_line("12/100 Test  #13: bar ......***Exception: SegFault  0.10 sec")
            .unwrap();
        assert_eq!(
            (p.outcome, p.detail.as_deref(), p.seconds),
            (Outcome::Failed, Some("Exception: SegFault"), Some(0.10))
        );

        let p = parse_progress_line("1/1 Test #1: baz ***Timeout 1500.01 sec").unwrap();
        assert_eq!(
            (p.name.as_str(), p.detail.as_deref()),
            ("baz", Some("Timeout"))
        );

        let p = parse_progress_line("1/1 Test #2: qux .....***Skipped   0.00 sec").unwrap();
        assert_eq!(p.outcome, Outcome::Skipped);

        let p = parse_progress_line(
            "1/1 Test #3: a-very-long-test-name-without-dots   Passed    1.00 sec",
        )
        .unwrap();
        assert_eq!(p.name, "a-very-long-test-name-without-dots");

        assert_eq!(
            parse_progress_line("          Start  405: H5IMPORT-h5importtest-clear-objects"),
            None
        );
        assert_eq!(
            parse_progress_line("100% tests passed, 0 tests failed out of 2108"),
            None
        );
        assert_eq!(
            parse_progress_line("Total Test time (real) =  38.78 sec"),
            None
        );
        assert_eq!(parse_progress_line("Test project /b/tools"), None);
    }
}

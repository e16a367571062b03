//! The expected-differences file: test outcomes that may differ from native in a mode.
//!
//! Format: one entry per line, `<mode-pattern> <suite> <test-name>  # reason`. The mode
//! pattern is a glob over mode labels (`*` and `?`); the test name is the rest of the line up
//! to ` #` and may contain spaces. Every entry needs a reason. Blank lines and lines starting
//! with `#` are comments.

use crate::error::{Error, Result};
use crate::results::Suite;

/// One allowed difference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Glob over mode labels.
    pub mode_pattern: String,
    /// The suite the test belongs to.
    pub suite: Suite,
    /// The exact test name.
    pub test: String,
    /// Why the difference is expected.
    pub reason: String,
    /// 1-based line number in the file.
    pub line: usize,
}

/// All entries of an expected-differences file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExpectedDifferences {
    /// The entries in file order.
    pub entries: Vec<Entry>,
}

/// Matches `text` against a glob with `*` (any run) and `?` (any one character).
pub fn glob_match(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ti));
            pi += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

impl ExpectedDifferences {
    /// Parses the file's text; `source` names the file in errors (`file:line: ...`).
    pub fn parse(text: &str, source: &str) -> Result<Self> {
        let mut entries = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            let line_no = i + 1;
            let line = raw.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let (body, reason) = match line.find(" #").or_else(|| line.find("\t#")) {
                Some(pos) => (line[..pos].trim(), line[pos + 2..].trim()),
                None => (line, ""),
            };
            let next_word = |s: &str| -> Option<(String, String)> {
                let s = s.trim_start();
                let end = s.find(char::is_whitespace)?;
                Some((s[..end].to_string(), s[end..].trim().to_string()))
            };
            let parsed = next_word(body).and_then(|(mode, rest)| {
                let (suite, test) = next_word(&rest)?;
                (!test.is_empty()).then_some((mode, suite, test))
            });
            let Some((mode, suite, test)) = parsed else {
                return Err(Error::new(format!(
                    "{source}:{line_no}: expected '<mode-pattern> <suite> <test-name>  # reason', got {raw:?}"
                )));
            };
            let suite: Suite = suite
                .parse()
                .map_err(|e| Error::new(format!("{source}:{line_no}: {e}")))?;
            if reason.is_empty() {
                return Err(Error::new(format!(
                    "{source}:{line_no}: entry for {test:?} has no reason; add '# <why HDF5's pass_through shows the same difference>'"
                )));
            }
            entries.push(Entry {
                mode_pattern: mode,
                suite,
                test,
                reason: reason.to_string(),
                line: line_no,
            });
        }
        Ok(Self { entries })
    }

    /// The first entry allowing `test` of `suite` to differ in mode `label`.
    pub fn lookup(&self, label: &str, suite: Suite, test: &str) -> Option<&Entry> {
        self.entries
            .iter()
            .find(|e| e.suite == suite && e.test == test && glob_match(&e.mode_pattern, label))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globbing() {
        assert!(glob_match("*", "anything"));
        assert!(glob_match("h5prov*", "h5prov-over-pt"));
        assert!(glob_match("h5prov*", "h5prov"));
        assert!(!glob_match("h5prov*", "pt-over-h5prov"));
        assert!(glob_match("*h5prov*", "pt-over-h5prov"));
        assert!(glob_match("pass_throug?", "pass_through"));
        assert!(!glob_match("pass", "pass_through"));
        assert!(glob_match("a*b*c", "aXXbYYc"));
        assert!(!glob_match("a*b*c", "aXXbYY"));
    }

    #[test]
    fn parses_entries_with_spaces_in_names() {
        let text = "\
# header comment

*        tools H5DUMP-tfamily   # error stack lists the pass_through connector
h5prov*  api   file: H5Fflush > file flushing at local scope  # same in pass_through
";
        let e = ExpectedDifferences::parse(text, "expected.txt").unwrap();
        assert_eq!(e.entries.len(), 2);
        assert_eq!(
            e.entries[1].test,
            "file: H5Fflush > file flushing at local scope"
        );
        assert_eq!(e.entries[1].line, 4);
        assert!(e
            .lookup("pass_through", Suite::Tools, "H5DUMP-tfamily")
            .is_some());
        assert!(e
            .lookup(
                "h5prov-over-pt",
                Suite::Api,
                "file: H5Fflush > file flushing at local scope"
            )
            .is_some());
        assert!(e
            .lookup(
                "pass_through",
                Suite::Api,
                "file: H5Fflush > file flushing at local scope"
            )
            .is_none());
        assert!(e
            .lookup(
                "h5prov",
                Suite::Vol,
                "file: H5Fflush > file flushing at local scope"
            )
            .is_none());
    }

    #[test]
    fn errors_name_file_and_line() {
        let err = ExpectedDifferences::parse("\n* tools H5DUMP-x\n", "ed.txt")
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("ed.txt:2:") && err.contains("no reason"),
            "{err}"
        );
        let err = ExpectedDifferences::parse("* unit x # r\n", "ed.txt")
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("ed.txt:1:") && err.contains("unknown suite"),
            "{err}"
        );
        let err = ExpectedDifferences::parse("* tools\n", "ed.txt")
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("ed.txt:1:"), "{err}");
    }
}

//! The planted-problem suite (`docs/INSIGHTS-SUITE.md`): every problem of
//! `tests/c/insights/suite.toml` and its fix run with h5prov, and the analyzer is scored on
//! them: recall at WARN/HIGH (all problems, and the part held out from rule-writing),
//! precision at WARN/HIGH and over all insights, fixed variants quiet about their problem,
//! clean controls empty, and the same serious findings run after run. The tables are
//! printed in markdown (`--nocapture` shows them), each measure against the issue's
//! threshold; what is asserted (unless `H5PROV_SUITE_REPORT_ONLY=1`) is that no measure
//! falls below the floor the rules have reached ([`FLOORS`]). The second and third blind
//! sets (`blind2`, `blind3`) are scored apart, each in its own table with no floor.
//!
//! `H5PROV_SUITE_RUNS` (default 3) sets the runs of every program and variant;
//! `H5PROV_SUITE_ONLY=id,id` limits the run to some entries (the thresholds are then not
//! asserted).

use h5prov_tests::{insights_of, repo, Found};
use std::collections::BTreeSet;
use std::fmt::Write as _;

/// One `[[problem]]`, `[[control]]` or `[[alias]]` of the manifest.
#[derive(Debug, Default, Clone)]
struct Entry {
    /// `problem`, `control` or `alias`.
    kind: String,
    id: String,
    /// `tests/c/insights/<program>.c`.
    program: String,
    /// 0 serial, else the ranks of `mpirun -np`.
    ranks: usize,
    /// The mechanism: the insight code that names the problem.
    key: String,
    /// Codes also true of the problem.
    also: Vec<String>,
    /// Codes still true of the fixed variant (the fix removes the planted waste, not all
    /// of a program's work).
    fixed_also: Vec<String>,
    report_args: Vec<String>,
    held_out: bool,
    /// Part of the fresh blind held-out set (h21): committed with its expert text before
    /// h5prov ever ran on it.
    blind: bool,
    /// Part of the second blind held-out set (h35): committed with its expert text before
    /// h5prov ever ran on it, after every rule of today's model was written; a measurement
    /// of recall on problems nobody wrote a rule against (no floor).
    blind2: bool,
    /// Part of the third blind held-out set (h37): committed with its expert text before
    /// h5prov ever ran on it, written without reading the rule code; scored apart, like
    /// `blind2`, with no floor.
    blind3: bool,
    new: bool,
    source: String,
    expert: String,
    /// An alias's insight code, which names the mechanisms of `keys`.
    code: String,
    /// The mechanism keys an alias's code names.
    keys: Vec<String>,
}

/// A manifest value: the TOML subset the manifest uses.
enum Value {
    Str(String),
    Bool(bool),
    Int(usize),
    List(Vec<String>),
}

/// Parses a basic TOML string starting at `s` (after the opening quote): `\"` and `\\`
/// escapes. Returns the string and the rest after the closing quote.
fn parse_str(s: &str) -> Option<(String, &str)> {
    let mut out = String::new();
    let mut chars = s.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return Some((out, &s[i + 1..])),
            '\\' => match chars.next()?.1 {
                '"' => out.push('"'),
                '\\' => out.push('\\'),
                'n' => out.push('\n'),
                _ => return None,
            },
            c => out.push(c),
        }
    }
    None
}

/// Parses the value of `key = value` (one line).
fn parse_value(v: &str) -> Option<Value> {
    let v = v.trim();
    if let Some(rest) = v.strip_prefix('"') {
        let (s, rest) = parse_str(rest)?;
        return rest.trim().is_empty().then_some(Value::Str(s));
    }
    if let Some(inner) = v.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
        let mut items = Vec::new();
        let mut rest = inner.trim();
        while !rest.is_empty() {
            let (s, r) = parse_str(rest.strip_prefix('"')?)?;
            items.push(s);
            rest = r.trim_start();
            rest = rest.strip_prefix(',').unwrap_or(rest).trim_start();
        }
        return Some(Value::List(items));
    }
    match v {
        "true" => Some(Value::Bool(true)),
        "false" => Some(Value::Bool(false)),
        _ => v.parse().ok().map(Value::Int),
    }
}

/// Parses the manifest: `[[problem]]`/`[[control]]` tables of the fields above. An error
/// names the line and what is wrong with it.
fn parse_manifest(text: &str) -> Result<Vec<Entry>, String> {
    let mut entries: Vec<Entry> = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let n = n + 1;
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(kind) = line.strip_prefix("[[").and_then(|l| l.strip_suffix("]]")) {
            if !["problem", "control", "alias"].contains(&kind) {
                return Err(format!("line {n}: unknown table [[{kind}]]"));
            }
            entries.push(Entry {
                kind: kind.to_string(),
                ..Entry::default()
            });
            continue;
        }
        let (key, value) = line
            .split_once('=')
            .ok_or_else(|| format!("line {n}: not `key = value`: {line}"))?;
        let key = key.trim();
        let value = parse_value(value)
            .ok_or_else(|| format!("line {n}: bad value for `{key}`: {value}"))?;
        let e = entries
            .last_mut()
            .ok_or_else(|| format!("line {n}: `{key}` before any [[problem]] or [[control]]"))?;
        match (key, value) {
            ("id", Value::Str(s)) => e.id = s,
            ("code", Value::Str(s)) => e.code = s,
            ("keys", Value::List(l)) => e.keys = l,
            ("program", Value::Str(s)) => e.program = s,
            ("key", Value::Str(s)) => e.key = s,
            ("source", Value::Str(s)) => e.source = s,
            ("expert", Value::Str(s)) => e.expert = s,
            ("ranks", Value::Int(i)) => e.ranks = i,
            ("held_out", Value::Bool(b)) => e.held_out = b,
            ("new", Value::Bool(b)) => e.new = b,
            ("blind", Value::Bool(b)) => e.blind = b,
            ("blind2", Value::Bool(b)) => e.blind2 = b,
            ("blind3", Value::Bool(b)) => e.blind3 = b,
            ("also", Value::List(l)) => e.also = l,
            ("fixed_also", Value::List(l)) => e.fixed_also = l,
            ("report_args", Value::List(l)) => e.report_args = l,
            (k, _) => return Err(format!("line {n}: unknown field or wrong type: `{k}`")),
        }
    }
    for e in &entries {
        if e.kind == "alias" {
            if e.code.is_empty() || e.keys.is_empty() {
                return Err(format!("[[alias]] `{}`: needs `code` and `keys`", e.code));
            }
            continue;
        }
        let what = format!("[[{}]] `{}`", e.kind, e.id);
        if e.id.is_empty() || e.program.is_empty() {
            return Err(format!("{what}: needs `id` and `program`"));
        }
        if e.kind == "problem" && (e.key.is_empty() || e.source.is_empty() || e.expert.is_empty()) {
            return Err(format!("{what}: needs `key`, `source` and `expert`"));
        }
    }
    Ok(entries)
}

fn manifest() -> Vec<Entry> {
    let path = repo().join("tests/c/insights/suite.toml");
    let text =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    parse_manifest(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The suite is what the issue asks for: at least 30 problems, 17 of them new, a third of
/// the new ones held out; ids unique; every program exists (MPI-only ones where run under
/// MPI); every problem in the docs' index. Cheap: runs nothing.
#[test]
fn manifest_is_complete() {
    let all = manifest();
    let problems: Vec<&Entry> = all.iter().filter(|e| e.kind == "problem").collect();
    let new = problems.iter().filter(|e| e.new).count();
    let held = problems.iter().filter(|e| e.held_out).count();
    assert!(problems.len() >= 30, "{} problems", problems.len());
    assert!(new >= 17, "{new} new problems");
    assert!(3 * held >= new, "{held} of {new} held out");
    assert!(
        problems.iter().all(|e| e.new || !e.held_out),
        "only new problems are held out"
    );
    assert!(
        problems.iter().all(|e| e.held_out || !e.blind),
        "the blind set is held out"
    );
    assert!(
        problems.iter().filter(|e| e.blind).count() >= 10,
        "a blind set of 10"
    );
    assert!(
        problems
            .iter()
            .all(|e| !e.blind2 || (e.held_out && e.new && !e.blind)),
        "the second blind set is new, held out and apart from the first"
    );
    assert!(
        problems
            .iter()
            .all(|e| !e.blind3 || (e.held_out && e.new && !e.blind && !e.blind2)),
        "the third blind set is new, held out and apart from the first two"
    );
    let mut ids = BTreeSet::new();
    let docs = std::fs::read_to_string(repo().join("docs/INSIGHTS-SUITE.md")).unwrap();
    let keys: BTreeSet<&str> = problems.iter().map(|e| e.key.as_str()).collect();
    for a in all.iter().filter(|e| e.kind == "alias") {
        for k in &a.keys {
            assert!(
                keys.contains(k.as_str()),
                "alias {}: no problem has key {k}",
                a.code
            );
        }
    }
    for e in all.iter().filter(|e| e.kind != "alias") {
        assert!(ids.insert(e.id.clone()), "duplicate id {}", e.id);
        let src = repo().join(format!("tests/c/insights/{}.c", e.program));
        let text = std::fs::read_to_string(&src)
            .unwrap_or_else(|err| panic!("{}: {}: {err}", e.id, src.display()));
        if text.contains("#error \"an MPI fixture") {
            assert!(e.ranks > 0, "{}: an MPI-only program run serially", e.id);
        }
        if e.kind == "problem" {
            assert!(
                text.contains("--fixed"),
                "{}: {} has no --fixed variant",
                e.id,
                src.display()
            );
            assert!(
                docs.contains(&format!("| `{}` | `{}` |", e.id, e.key)),
                "{}: not in docs/INSIGHTS-SUITE.md's index with key {}",
                e.id,
                e.key
            );
        }
    }
}

#[test]
fn manifest_errors_name_the_line() {
    for (bad, msg) in [
        ("id = \"x\"\n", "line 1: `id` before any"),
        ("[[problem]]\nid = x\n", "line 2: bad value for `id`"),
        ("[[problem]]\ncolour = \"red\"\n", "line 2: unknown field"),
        ("[[thing]]\n", "line 1: unknown table"),
        ("[[problem]]\nid = \"a\"\nprogram = \"b\"\n", "needs `key`"),
        ("[[alias]]\ncode = \"a\"\n", "needs `code` and `keys`"),
    ] {
        let e = parse_manifest(bad).expect_err(bad);
        assert!(e.contains(msg), "{bad:?}: {e}");
    }
}

/// The manifest's aliases: insight codes that name other mechanism keys.
struct Aliases(Vec<(String, Vec<String>)>);

impl Aliases {
    /// Whether insight `code` names mechanism `key`: the same name, or an alias of it.
    fn names(&self, code: &str, key: &str) -> bool {
        code == key
            || self
                .0
                .iter()
                .any(|(c, ks)| c == code && ks.iter().any(|k| k == key))
    }
}

/// Whether `level` is WARN or HIGH.
fn serious(level: &str) -> bool {
    level == "WARN" || level == "HIGH"
}

/// The insights of a run, without the `no_problem` line.
fn findings(e: &Entry, fixed: bool) -> Vec<Found> {
    let args: Vec<&str> = if fixed { vec!["--fixed"] } else { vec![] };
    let ranks = (e.ranks > 0).then_some(e.ranks);
    let report: Vec<&str> = e.report_args.iter().map(String::as_str).collect();
    insights_of(&e.program, &args, ranks, &report)
        .into_iter()
        .filter(|(c, _)| c != "no_problem")
        .collect()
}

/// Serious codes of a run, as a set.
fn serious_set(f: &[Found]) -> BTreeSet<String> {
    f.iter()
        .filter(|(_, l)| serious(l))
        .map(|(c, _)| c.clone())
        .collect()
}

/// The results of one entry over its runs.
struct Scored<'a> {
    aliases: &'a Aliases,
    entry: Entry,
    /// Runs of the problem (or of the control).
    runs: Vec<Vec<Found>>,
    /// Runs of the fixed variant (problems only).
    fixed: Vec<Vec<Found>>,
}

impl Scored<'_> {
    /// Whether `code` names the problem's mechanism (its key, or an alias of it).
    fn names_key(&self, code: &str) -> bool {
        self.aliases.names(code, &self.entry.key)
    }

    /// Whether a finding on the problem is true: its code names the key or an `also`.
    fn true_code(&self, code: &str) -> bool {
        self.names_key(code) || self.entry.also.iter().any(|a| self.aliases.names(code, a))
    }

    /// The runs in which the key is serious.
    fn named_runs(&self) -> usize {
        self.runs
            .iter()
            .filter(|r| r.iter().any(|(c, l)| self.names_key(c) && serious(l)))
            .count()
    }

    /// Named in every run.
    fn named(&self) -> bool {
        !self.runs.is_empty() && self.named_runs() == self.runs.len()
    }

    /// The fixed variant's runs in which the key stays serious.
    fn fixed_loud(&self) -> usize {
        self.fixed
            .iter()
            .filter(|r| r.iter().any(|(c, l)| self.names_key(c) && serious(l)))
            .count()
    }

    /// The same serious codes in every run (problem and fixed variant each).
    fn stable(&self) -> bool {
        let same = |rs: &[Vec<Found>]| {
            rs.windows(2)
                .all(|w| serious_set(&w[0]) == serious_set(&w[1]))
        };
        same(&self.runs) && same(&self.fixed)
    }

    /// (true, all) findings at WARN/HIGH (`serious_only`) or at any level, over every run:
    /// on the problem a finding is true when its code is the key or an `also`; on the
    /// fixed variant when it is a `fixed_also`; on a control never.
    fn precision_counts(&self, serious_only: bool) -> (usize, usize) {
        let keep = |l: &String| !serious_only || serious(l);
        let mut t = 0;
        let mut n = 0;
        for r in &self.runs {
            for (c, _) in r.iter().filter(|(_, l)| keep(l)) {
                n += 1;
                if self.entry.kind == "problem" && self.true_code(c) {
                    t += 1;
                }
            }
        }
        for r in &self.fixed {
            for (c, _) in r.iter().filter(|(_, l)| keep(l)) {
                n += 1;
                if self
                    .entry
                    .fixed_also
                    .iter()
                    .any(|a| self.aliases.names(c, a))
                {
                    t += 1;
                }
            }
        }
        (t, n)
    }
}

/// `code(level)` of the findings of all runs, each once, with its levels.
fn summary(runs: &[Vec<Found>]) -> String {
    let mut by: std::collections::BTreeMap<&str, BTreeSet<&str>> = Default::default();
    for r in runs {
        for (c, l) in r {
            by.entry(c).or_default().insert(l);
        }
    }
    if by.is_empty() {
        return "—".to_string();
    }
    by.iter()
        .map(|(c, ls)| format!("{c} ({})", ls.iter().copied().collect::<Vec<_>>().join("/")))
        .collect::<Vec<_>>()
        .join(", ")
}

/// One row of a problems table: id, key, which held-out set, named runs, the findings on
/// the problem and on its fix, stability.
fn problem_row(s: &Scored) -> String {
    format!(
        "| `{}`{} | `{}` | {} | {}/{} | {} | {} | {} |",
        s.entry.id,
        if s.entry.ranks > 0 {
            format!(" (np {})", s.entry.ranks)
        } else {
            String::new()
        },
        s.entry.key,
        if s.entry.blind {
            "blind"
        } else if s.entry.blind2 {
            "blind2"
        } else if s.entry.blind3 {
            "blind3"
        } else if s.entry.held_out {
            "yes"
        } else {
            ""
        },
        s.named_runs(),
        s.runs.len(),
        summary(&s.runs),
        summary(&s.fixed),
        stability(s)
    )
}

/// The table of a blind set scored apart from the floored measures (h35's second set,
/// h37's third): its problems, then recall at WARN/HIGH, precision on its own findings
/// (WARN/HIGH and all) and fixes quiet. A measurement, with no floor.
fn apart_table(out: &mut String, title: &str, helper: &str, set: &[&Scored]) {
    if set.is_empty() {
        return;
    }
    let named = set.iter().filter(|s| s.named()).count();
    let quiet = set.iter().filter(|s| s.fixed_loud() == 0).count();
    let (ss_t, ss_n) = precision_sum(set, true);
    let (sa_t, sa_n) = precision_sum(set, false);
    let _ = writeln!(
        out,
        "\n{title} ({helper}, {} problems; not in the measures above, no floor):\n\n\
         | problem | key | held out | named (runs) | findings on the problem | findings on --fixed | stable |\n\
         |---|---|---|---|---|---|---|",
        set.len()
    );
    for s in set {
        let _ = writeln!(out, "{}", problem_row(s));
    }
    let checks = [
        (
            "recall at WARN/HIGH",
            pct(named, set.len()),
            "≥ 75 %",
            at_least(named, set.len(), 0.75),
        ),
        (
            "precision at WARN/HIGH",
            pct(ss_t, ss_n),
            "100 %",
            ss_t == ss_n,
        ),
        (
            "precision over all insights (INFO included)",
            pct(sa_t, sa_n),
            "≥ 90 %",
            at_least(sa_t, sa_n, 0.9),
        ),
        (
            "fixed variants quiet about their problem",
            pct(quiet, set.len()),
            "all",
            quiet == set.len(),
        ),
    ];
    measures_table(out, &checks);
}

/// "yes" when stable, else the WARN/HIGH codes of each run that differ (`p:` the problem,
/// `f:` the fixed variant), e.g. `**no**: p [a, b] / [a]`.
fn stability(s: &Scored) -> String {
    if s.stable() {
        return "yes".to_string();
    }
    let sets = |rs: &[Vec<Found>]| {
        rs.iter()
            .map(|r| {
                let v: Vec<String> = serious_set(r).into_iter().collect();
                format!("[{}]", v.join(", "))
            })
            .collect::<Vec<_>>()
            .join(" / ")
    };
    let mut parts = Vec::new();
    if s.runs
        .windows(2)
        .any(|w| serious_set(&w[0]) != serious_set(&w[1]))
    {
        parts.push(format!("p {}", sets(&s.runs)));
    }
    if s.fixed
        .windows(2)
        .any(|w| serious_set(&w[0]) != serious_set(&w[1]))
    {
        parts.push(format!("f {}", sets(&s.fixed)));
    }
    format!("**no**: {}", parts.join("; "))
}

fn pct(t: usize, n: usize) -> String {
    if n == 0 {
        "— (0/0)".to_string()
    } else {
        format!("{:.0} % ({t}/{n})", 100.0 * t as f64 / n as f64)
    }
}

/// Whether `t/n` reaches `min` (an empty count passes).
fn at_least(t: usize, n: usize, min: f64) -> bool {
    n == 0 || t as f64 >= min * n as f64
}

#[test]
fn planted_problem_suite() {
    let runs: usize = std::env::var("H5PROV_SUITE_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3)
        .max(1);
    let only: Option<BTreeSet<String>> = std::env::var("H5PROV_SUITE_ONLY")
        .ok()
        .map(|v| v.split(',').map(|s| s.trim().to_string()).collect());
    let report_only = std::env::var("H5PROV_SUITE_REPORT_ONLY").is_ok_and(|v| v == "1");
    let all = manifest();
    let aliases = Aliases(
        all.iter()
            .filter(|e| e.kind == "alias")
            .map(|e| (e.code.clone(), e.keys.clone()))
            .collect(),
    );
    let entries: Vec<Entry> = all
        .into_iter()
        .filter(|e| e.kind != "alias")
        .filter(|e| only.as_ref().is_none_or(|o| o.contains(&e.id)))
        .collect();
    assert!(!entries.is_empty(), "H5PROV_SUITE_ONLY matches no entry");

    let mut scored = Vec::new();
    for e in entries {
        let problem_runs = (0..runs).map(|_| findings(&e, false)).collect();
        let fixed_runs = if e.kind == "problem" {
            (0..runs).map(|_| findings(&e, true)).collect()
        } else {
            Vec::new()
        };
        scored.push(Scored {
            aliases: &aliases,
            entry: e,
            runs: problem_runs,
            fixed: fixed_runs,
        });
    }

    // The floored measures are over the entries the rules were written against; the second
    // and third blind sets (h35, h37) are scored on their own below, as measurements.
    let core: Vec<&Scored> = scored
        .iter()
        .filter(|s| !s.entry.blind2 && !s.entry.blind3)
        .collect();
    let problems: Vec<&Scored> = core
        .iter()
        .copied()
        .filter(|s| s.entry.kind == "problem")
        .collect();
    let controls: Vec<&Scored> = core
        .iter()
        .copied()
        .filter(|s| s.entry.kind == "control")
        .collect();
    let held: Vec<&&Scored> = problems.iter().filter(|s| s.entry.held_out).collect();
    let named = problems.iter().filter(|s| s.named()).count();
    let held_named = held.iter().filter(|s| s.named()).count();
    let blind: Vec<&&Scored> = problems.iter().filter(|s| s.entry.blind).collect();
    let blind_named = blind.iter().filter(|s| s.named()).count();
    let blind2: Vec<&Scored> = scored.iter().filter(|s| s.entry.blind2).collect();
    let blind3: Vec<&Scored> = scored.iter().filter(|s| s.entry.blind3).collect();
    let (ps_t, ps_n) = precision_sum(&core, true);
    let (pa_t, pa_n) = precision_sum(&core, false);
    let quiet = problems.iter().filter(|s| s.fixed_loud() == 0).count();
    let empty = controls
        .iter()
        .filter(|s| s.runs.iter().all(|r| r.is_empty()))
        .count();
    let stable = core.iter().filter(|s| s.stable()).count();

    let mut out = String::new();
    let _ = writeln!(
        out,
        "\n### Planted-problem suite: {} problems ({} held out), {} controls, {runs} run(s) each\n",
        problems.len(),
        held.len(),
        controls.len()
    );
    if !aliases.0.is_empty() {
        let list: Vec<String> = aliases
            .0
            .iter()
            .map(|(c, ks)| format!("`{c}` names `{}`", ks.join("`, `")))
            .collect();
        let _ = writeln!(out, "Aliases (manifest): {}.\n", list.join("; "));
    }
    let _ = writeln!(
        out,
        "| problem | key | held out | named (runs) | findings on the problem | findings on --fixed | stable |"
    );
    let _ = writeln!(out, "|---|---|---|---|---|---|---|");
    for s in &problems {
        let _ = writeln!(out, "{}", problem_row(s));
    }
    let _ = writeln!(out, "\n| control | findings | stable |\n|---|---|---|");
    for s in &controls {
        let _ = writeln!(
            out,
            "| `{}`{} | {} | {} |",
            s.entry.id,
            if s.entry.ranks > 0 {
                format!(" (np {})", s.entry.ranks)
            } else {
                String::new()
            },
            summary(&s.runs),
            stability(s)
        );
    }
    let checks = [
        (
            "recall at WARN/HIGH (named in every run)",
            pct(named, problems.len()),
            "≥ 90 %",
            at_least(named, problems.len(), 0.9),
        ),
        (
            "recall, held-out part",
            pct(held_named, held.len()),
            "≥ 75 %",
            at_least(held_named, held.len(), 0.75),
        ),
        (
            "recall, fresh blind set (h21)",
            pct(blind_named, blind.len()),
            "≥ 75 %",
            at_least(blind_named, blind.len(), 0.75),
        ),
        (
            "precision at WARN/HIGH",
            pct(ps_t, ps_n),
            "100 %",
            ps_t == ps_n,
        ),
        (
            "precision over all insights (INFO included)",
            pct(pa_t, pa_n),
            "≥ 90 %",
            at_least(pa_t, pa_n, 0.9),
        ),
        (
            "fixed variants quiet about their problem",
            pct(quiet, problems.len()),
            "all",
            quiet == problems.len(),
        ),
        (
            "controls with no insight",
            pct(empty, controls.len()),
            "all",
            empty == controls.len(),
        ),
        (
            "stable over the runs (same WARN/HIGH codes)",
            pct(stable, core.len()),
            "all",
            stable == core.len(),
        ),
    ];
    measures_table(&mut out, &checks);
    // The second blind set (h35): written after every rule of today's model; the third
    // (h37): written without reading the rule code, for the rules after later changes.
    // Each scored apart from the measures above, with no floor.
    apart_table(&mut out, "The second blind set", "h35", &blind2);
    apart_table(&mut out, "The third blind set", "h37", &blind3);
    println!("{out}");
    if let Ok(path) = std::env::var("H5PROV_SUITE_TABLES") {
        std::fs::write(&path, &out).unwrap_or_else(|e| panic!("write {path}: {e}"));
    }
    if report_only || only.is_some() {
        return;
    }
    // What is asserted is the floor each measure has reached (a little under, for noise),
    // so that a change that loses a named problem or adds a false finding fails; a floor
    // is raised as the rules improve, up to the threshold.
    let values = [
        frac(named, problems.len()),
        frac(held_named, held.len()),
        frac(blind_named, blind.len()),
        frac(ps_t, ps_n),
        frac(pa_t, pa_n),
        frac(quiet, problems.len()),
        frac(empty, controls.len()),
        frac(stable, core.len()),
    ];
    let below: Vec<String> = checks
        .iter()
        .zip(values)
        .zip(FLOORS)
        .filter(|((_, v), f)| v + 1e-9 < *f)
        .map(|((c, v), f)| format!("{}: {:.0} % < floor {:.0} %", c.0, v * 100.0, f * 100.0))
        .collect();
    assert!(below.is_empty(), "below the floor: {below:?}\n{out}");
}

/// The floor of each measure of the table, in its order (1.0 = all): a little under what
/// the rules reach. h21 (3 runs at 15:11 UTC, with the fresh blind set of 10 in the
/// suite): recall 88 % (44/50), held-out 67 % (12/18), the blind set 50 % (5/10),
/// precision 91 % at WARN/HIGH (207/228: the blind set's findings that name a neighbour of
/// its key) and 90 % overall, every fix quiet about its key, both controls empty, every
/// entry stable. The floors keep the margin the h15 ones kept for a loaded CI machine:
/// recall may lose two problems (42/50), the held-out part one (11/18) and the blind set
/// one (4/10), precision a few findings, stability four entries (48/52). The issue's own
/// thresholds (90 %, 75 %, 100 %) are what the note reports: with the blind set they are
/// not met, and the floors say what is, not what is wanted. h24 (3 runs at 15:52 UTC,
/// after `repeated_attribute_reads` and `delete_recreate`): recall 92 % (46/50), held-out
/// 78 % (14/18), the blind set 70 % (7/10; no longer a blind number, its traces were read
/// first), precision 93 % (207/222) at WARN/HIGH and overall, fixes quiet, controls
/// empty, every entry stable; the floors keep the same margin (44/50, 13/18, 6/10).
/// h27 (3 runs at 18:37 UTC, after `vlen_log`'s partial writes were left to
/// `vlen_strings` and `repeated_link_iteration`): recall 94 % (47/50), held-out 83 %
/// (15/18), the blind set 80 % (8/10, not blind: written with its traces in view),
/// precision 97 % (219/225, the six false ones `small_io` on `attr_read_in_loop`) at
/// WARN/HIGH and overall; the floors keep the margin (45/50, 14/18, 7/10, a few findings).
/// h32 (3 runs at 21:14 UTC, after `small_io`'s severity came from what batching would
/// save): recall 96 % (48/50), held-out 89 % (16/18), the blind set 90 % (9/10, not
/// blind), precision 100 % (222/222) at WARN/HIGH and 97 % (222/228) overall (the six
/// INFO `small_io` on `attr_read_in_loop`); the floors move to just under it: one problem
/// fewer (47/50, 15/18, 8/10), two false serious findings, a few INFO ones.
/// The second blind set (h35, 8 problems written after every rule of today's model) is
/// not in these measures: it is scored apart, with no floor (1 run at 21:50 UTC: recall 50 %,
/// 4/8; docs/INSIGHTS-SUITE.md), so that adding it leaves the guard on the other entries as
/// tight as before. Nor is the third (h37, 8 problems committed before any h5prov run on
/// them; on main's rules 8/8 named at 00:07 UTC, docs/INSIGHTS-SUITE.md): it has its own
/// table, for the lead to score on the merged rules. Twelfth stop: `small_io` is declared
/// true of `attr_read_in_loop` and of its fix (both read 1024 blocks of 4 KiB; `suite.toml`
/// says why): its severity sits at the model's edge and flipped to HIGH under the debug
/// connector, 98 % (222/227) here, all five of them that.
const FLOORS: [f64; 8] = [0.94, 0.83, 0.8, 0.99, 0.96, 1.0, 1.0, 0.92];

/// `t / n`, 1 when `n` is 0.
fn frac(t: usize, n: usize) -> f64 {
    if n == 0 {
        1.0
    } else {
        t as f64 / n as f64
    }
}

/// (true, all) findings over `set`, at WARN/HIGH (`serious_only`) or at any level
/// ([`Scored::precision_counts`] summed).
fn precision_sum(set: &[&Scored], serious_only: bool) -> (usize, usize) {
    set.iter()
        .map(|s| s.precision_counts(serious_only))
        .fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1))
}

/// Appends the measures table: each measure's value, what Done-when asks, and whether met.
fn measures_table(out: &mut String, checks: &[(&str, String, &str, bool)]) {
    let _ = writeln!(
        out,
        "\n| measure | value | Done when | met |\n|---|---|---|---|"
    );
    for (what, value, want, ok) in checks {
        let _ = writeln!(
            out,
            "| {what} | {value} | {want} | {} |",
            if *ok { "yes" } else { "**no**" }
        );
    }
}

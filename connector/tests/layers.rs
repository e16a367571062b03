//! The connector's bottom layer imports nothing above it: `ffi/sys.rs` (OS queries, the
//! `fork()` handler registration, the unwind guard) names no other connector module, and
//! `clock.rs` names only `ffi::sys`. The tracer registers its fork handlers by passing
//! them down (`sys::register_fork_handlers(before, parent, child)`), so no cycle runs
//! `clock → ffi/sys → trace`.
//!
//! No top-level modules import each other in a cycle (`ffi/sys.rs` counted as a node of its
//! own). The callback table's rows live in `ops` (safe tokens) and `ffi/table.rs` expands
//! them into trampolines, so `ops` names nothing of `ffi`.
//!
//! The sources are lexed with `proc-macro2` (comments and doc text are not paths), and
//! every path that starts with `crate`, `super` or `$crate` is collected.

use proc_macro2::{TokenStream, TokenTree};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The connector paths a token stream names: `crate::a::b` → `crate::a::b` (its leading
/// segments, up to the first non-identifier).
fn connector_paths(ts: TokenStream, out: &mut Vec<String>) {
    let toks: Vec<TokenTree> = ts.into_iter().collect();
    let mut i = 0;
    while i < toks.len() {
        if let TokenTree::Group(g) = &toks[i] {
            connector_paths(g.stream(), out);
            i += 1;
            continue;
        }
        let dollar = matches!(&toks[i], TokenTree::Punct(p) if p.as_char() == '$');
        let at = i + usize::from(dollar);
        let root = match toks.get(at) {
            Some(TokenTree::Ident(id)) if id == "crate" || (!dollar && id == "super") => {
                id.to_string()
            }
            _ => {
                i += 1;
                continue;
            }
        };
        let mut path = root;
        let mut j = at + 1;
        // `::` is two `:` puncts, then an identifier.
        while let (
            Some(TokenTree::Punct(a)),
            Some(TokenTree::Punct(b)),
            Some(TokenTree::Ident(n)),
        ) = (toks.get(j), toks.get(j + 1), toks.get(j + 2))
        {
            if a.as_char() != ':' || b.as_char() != ':' {
                break;
            }
            path.push_str("::");
            path.push_str(&n.to_string());
            j += 3;
        }
        // `crate::{a, b}`: a group of paths.
        if let (Some(TokenTree::Punct(a)), Some(TokenTree::Group(_))) =
            (toks.get(j), toks.get(j + 2))
        {
            if a.as_char() == ':' {
                path.push_str("::{..}");
            }
        }
        if path.contains("::") {
            out.push(path);
        }
        i = j;
    }
}

fn paths_of_source(text: &str) -> Vec<String> {
    let ts: TokenStream = text.parse().expect("the source lexes");
    let mut out = Vec::new();
    connector_paths(ts, &mut out);
    out
}

fn paths_of(file: &str) -> Vec<String> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("src").join(file);
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    paths_of_source(&text)
}

#[test]
fn ffi_sys_names_no_other_connector_module() {
    let paths = paths_of("ffi/sys.rs");
    assert!(
        paths.is_empty(),
        "connector/src/ffi/sys.rs is the bottom layer (clock.rs builds on it) and must name \
         no other connector module; it names {paths:?} (pass what it needs down to it, as \
         trace::register_fork_handlers does)"
    );
}

#[test]
fn clock_names_only_ffi_sys() {
    let bad: Vec<String> = paths_of("clock.rs")
        .into_iter()
        .filter(|p| p != "crate::ffi::sys" && !p.starts_with("super::"))
        .collect();
    assert!(
        bad.is_empty(),
        "connector/src/clock.rs may name only crate::ffi::sys of the connector; it names {bad:?}"
    );
}

#[test]
fn the_checker_finds_paths_but_not_comments() {
    let src = r#"
        /// See [`crate::clock`].
        // crate::trace::x
        fn f() { crate::trace::before_fork(); g(super::guard_unwind); }
        macro_rules! m { () => { $crate::ffi::sys::tsc() } }
        use crate::{a, b};
    "#;
    assert_eq!(
        paths_of_source(src),
        [
            "crate::trace::before_fork",
            "super::guard_unwind",
            "crate::ffi::sys::tsc",
            "crate::{..}",
        ]
    );
}

/// The node of the import graph a connector path leads to, named in module `from`
/// (`ffi/sys.rs` is a node of its own: the OS layer under everything, in `ffi/` only
/// because its code is `unsafe`); `None` for the module's own items.
fn node_of(from: &str, path: &str) -> Option<String> {
    let segs: Vec<&str> = path.split("::").collect();
    let node = match segs[0] {
        "super" if from.starts_with("ffi") => match segs.get(1) {
            Some(&"sys") => "ffi::sys".to_string(),
            _ => "ffi".to_string(),
        },
        "super" => return None,
        _ => match (segs.get(1), segs.get(2)) {
            (Some(&"ffi"), Some(&"sys")) => "ffi::sys".to_string(),
            (Some(m), _) if !m.starts_with('{') => m.to_string(),
            _ => panic!("{from}: `{path}`: name the module of each item"),
        },
    };
    (node != from).then_some(node)
}

/// The import graph of the connector's top-level modules: node → the nodes it names.
fn import_graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    let mut dirs = vec![src.clone()];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display())) {
            let p = e.expect("a directory entry").path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                files.push(p);
            }
        }
    }
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in files {
        let rel = f
            .strip_prefix(&src)
            .expect("under src")
            .to_string_lossy()
            .into_owned();
        if rel == "lib.rs" {
            continue; // the root declares the modules
        }
        let from = match rel.split_once('/') {
            Some(("ffi", "sys.rs")) => "ffi::sys".to_string(),
            Some((dir, _)) => dir.to_string(),
            None => rel.trim_end_matches(".rs").to_string(),
        };
        for p in paths_of(&rel) {
            if let Some(to) = node_of(&from, &p) {
                edges.entry(from.clone()).or_default().insert(to);
            }
        }
    }
    edges
}

#[path = "../../tests/common/cycles.rs"]
mod cycles;
use cycles::cycles;

#[test]
fn no_cycle_between_top_level_modules() {
    let graph = import_graph();
    // A module split into a directory (`trace/`, `ffi/callbacks/`) is one node: its files
    // name each other freely.
    for node in ["trace", "ffi"] {
        assert!(graph.contains_key(node), "no node {node} in {graph:?}");
    }
    assert!(
        graph.keys().all(|n| !n.contains('/')),
        "a file of a module directory became a node of its own: {graph:?}"
    );
    let got = cycles(&graph);
    assert!(
        got.is_empty(),
        "the connector's top-level modules import each other in a cycle: {got:?}"
    );
}

#[test]
fn the_cycle_finder_finds_cycles_and_only_them() {
    let g = |pairs: &[(&str, &str)]| {
        let mut e: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (a, b) in pairs {
            e.entry(a.to_string()).or_default().insert(b.to_string());
        }
        e
    };
    assert!(cycles(&g(&[("trace", "clock"), ("clock", "ffi::sys")])).is_empty());
    assert_eq!(
        cycles(&g(&[
            ("clock", "ffi::sys"),
            ("ffi::sys", "trace"),
            ("trace", "clock"),
            ("tree", "config"),
        ])),
        [["clock", "ffi::sys", "trace"]]
    );
    assert_eq!(node_of("ffi", "super::sys::tsc"), Some("ffi::sys".into()));
    assert_eq!(
        node_of("trace", "crate::ffi::sys::x"),
        Some("ffi::sys".into())
    );
    assert_eq!(node_of("trace", "super::x"), None);
    assert_eq!(node_of("ops", "crate::ffi::table::Op"), Some("ffi".into()));
}

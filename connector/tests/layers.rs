//! The connector's bottom layer imports nothing above it: `ffi/sys.rs` (OS queries, the
//! `fork()` handler registration, the unwind guard) names no other connector module, and
//! `clock.rs` names only `ffi::sys`. The tracer registers its fork handlers by passing
//! them down (`sys::register_fork_handlers(before, parent, child)`), so no cycle runs
//! `clock → ffi/sys → trace`.
//!
//! The sources are lexed with `proc-macro2` (comments and doc text are not paths), and
//! every path that starts with `crate`, `super` or `$crate` is collected.

use proc_macro2::{TokenStream, TokenTree};
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

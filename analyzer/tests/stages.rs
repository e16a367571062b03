//! The analyzer's data flows one way: read → aggregate → analysis → insights → report →
//! render (export and live beside render; units below everything), and no module imports
//! a later stage (see `src/lib.rs`). Every source file under `src/` (but the binary's
//! `main.rs` and `malloc.rs`) is given the stage of its top-level module, and every
//! `crate::` and `super::` path it names must lead to a module of the same or an earlier
//! stage. Modules of one stage may not import each other in a cycle either. Unit tests
//! (`#[cfg(test)] mod`) are not part of the flow: they may drive the whole pipeline.
//!
//! The sources are lexed with `proc-macro2` (comments and doc text are not paths), as
//! `connector/tests/layers.rs` does for the connector.

use proc_macro2::{TokenStream, TokenTree};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Each top-level module's stage; a module may import its own and earlier stages.
/// A new top-level module must be added here.
const STAGES: &[(&str, u8)] = &[
    ("units", 0),
    ("read", 1),
    ("aggregate", 2),
    ("analysis", 3),
    ("insights", 4),
    ("report", 5),
    ("render", 6),
    ("export", 7),
    ("live", 7),
];

/// The crate root (`lib.rs`: `load`, `report_for`) comes after every stage.
const ROOT_STAGE: u8 = 8;

fn stage_of(module: &str) -> Option<u8> {
    STAGES.iter().find(|(m, _)| *m == module).map(|&(_, s)| s)
}

/// A path a source names, with the module it is named in: `crate::a::b` in module
/// `x::y` → (`["x", "y"]`, `["crate", "a", "b"]`).
type Named = (Vec<String>, Vec<String>);

/// The paths a token stream of module `module` names that start with `crate` or `super`,
/// as their segments (up to the first non-identifier). Inline modules (`mod tests { .. }`)
/// extend `module`, so that their `super::` resolves.
fn crate_paths(ts: TokenStream, module: &[String], out: &mut Vec<Named>) {
    let toks: Vec<TokenTree> = ts.into_iter().collect();
    let mut i = 0;
    while i < toks.len() {
        // `#[cfg(test)] mod tests { .. }`: unit tests may drive the whole pipeline.
        if let (
            TokenTree::Punct(hash),
            Some(TokenTree::Group(attr)),
            Some(TokenTree::Ident(kw)),
            Some(TokenTree::Ident(_)),
            Some(TokenTree::Group(_)),
        ) = (
            &toks[i],
            toks.get(i + 1),
            toks.get(i + 2),
            toks.get(i + 3),
            toks.get(i + 4),
        ) {
            if hash.as_char() == '#' && attr.stream().to_string() == "cfg (test)" && kw == "mod" {
                i += 5;
                continue;
            }
        }
        if let (TokenTree::Ident(kw), Some(TokenTree::Ident(name)), Some(TokenTree::Group(g))) =
            (&toks[i], toks.get(i + 1), toks.get(i + 2))
        {
            if kw == "mod" {
                let mut inner = module.to_vec();
                inner.push(name.to_string());
                crate_paths(g.stream(), &inner, out);
                i += 3;
                continue;
            }
        }
        if let TokenTree::Group(g) = &toks[i] {
            crate_paths(g.stream(), module, out);
            i += 1;
            continue;
        }
        let mut path = match &toks[i] {
            TokenTree::Ident(id) if id == "crate" || id == "super" => vec![id.to_string()],
            _ => {
                i += 1;
                continue;
            }
        };
        let mut j = i + 1;
        // `::` is two `:` puncts, then an identifier (`super::super::x` too).
        while let (
            Some(TokenTree::Punct(a)),
            Some(TokenTree::Punct(b)),
            Some(TokenTree::Ident(n)),
        ) = (toks.get(j), toks.get(j + 1), toks.get(j + 2))
        {
            if a.as_char() != ':' || b.as_char() != ':' {
                break;
            }
            path.push(n.to_string());
            j += 3;
        }
        // `crate::{a, b}`: every path of the group.
        if let (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(_)), Some(TokenTree::Group(g))) =
            (toks.get(j), toks.get(j + 1), toks.get(j + 2))
        {
            if a.as_char() == ':' && path.len() == 1 && path[0] == "crate" {
                for item in g.stream().to_string().split(',') {
                    let first = item.trim().split("::").next().unwrap_or("").trim();
                    if !first.is_empty() {
                        out.push((module.to_vec(), vec!["crate".into(), first.to_string()]));
                    }
                }
                i = j + 3;
                continue;
            }
        }
        if path.len() > 1 {
            out.push((module.to_vec(), path));
        }
        i = j;
    }
}

/// The top-level module a path leads to, from the file's module (`["aggregate",
/// "check"]` for `aggregate/check.rs`); `None` for the crate root's own items and globs.
fn target_module(file_module: &[String], path: &[String]) -> Option<String> {
    let mut segs: Vec<String> = if path[0] == "crate" {
        path[1..].to_vec()
    } else {
        let mut base = file_module.to_vec();
        let mut rest = path;
        while rest.first().is_some_and(|s| s == "super") {
            base.pop();
            rest = &rest[1..];
        }
        base.extend(rest.iter().cloned());
        base
    };
    if segs.is_empty() {
        return None;
    }
    let first = segs.swap_remove(0);
    (first != "self").then_some(first)
}

/// The module a source file defines: `aggregate/mod.rs` → `["aggregate"]`.
fn module_of(rel: &Path) -> Vec<String> {
    let mut segs: Vec<String> = rel
        .with_extension("")
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if segs.last().is_some_and(|s| s == "mod" || s == "lib") {
        segs.pop();
    }
    segs
}

#[path = "../../tests/common/cycles.rs"]
mod cycles;
use cycles::cycles;

/// Every problem in the sources under `src`: an import of a later stage, a top-level
/// module with no stage, or a cycle between top-level modules.
fn problems(src: &Path) -> Vec<String> {
    let mut files = Vec::new();
    let mut dirs = vec![src.to_path_buf()];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display())) {
            let p: PathBuf = e.expect("a directory entry").path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                files.push(p);
            }
        }
    }
    files.sort();
    let mut out = Vec::new();
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in files {
        let rel = f.strip_prefix(src).expect("under src").to_path_buf();
        if rel == Path::new("main.rs") || rel == Path::new("malloc.rs") {
            continue; // the binary, not the library
        }
        let module = module_of(&rel);
        let from = match module.first() {
            None => ROOT_STAGE,
            Some(m) => match stage_of(m) {
                Some(s) => s,
                None => {
                    out.push(format!("{}: module `{m}` has no stage", rel.display()));
                    continue;
                }
            },
        };
        let text = std::fs::read_to_string(&f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        let ts: TokenStream = text.parse().expect("the source lexes");
        let mut paths = Vec::new();
        crate_paths(ts, &module, &mut paths);
        for (in_module, p) in paths {
            let Some(to) = target_module(&in_module, &p) else {
                continue;
            };
            if let Some(m) = module
                .first()
                .filter(|m| **m != to && stage_of(&to).is_some())
            {
                edges.entry(m.clone()).or_default().insert(to.clone());
            }
            match stage_of(&to) {
                Some(s) if s <= from => {}
                Some(s) => out.push(format!(
                    "{} (stage {from}) imports `{}` of the later stage {s}",
                    rel.display(),
                    p.join("::")
                )),
                // A root item (`crate::load`) or a glob: only the root may name those.
                None if from == ROOT_STAGE || to == "*" => {}
                None => out.push(format!(
                    "{} (stage {from}) names `{}`, which is no staged module",
                    rel.display(),
                    p.join("::")
                )),
            }
        }
    }
    for c in cycles(&edges) {
        out.push(format!(
            "the top-level modules {} import each other in a cycle",
            c.join(", ")
        ));
    }
    out
}

#[test]
fn no_module_imports_a_later_stage() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let bad = problems(&src);
    assert!(
        bad.is_empty(),
        "the analyzer's stages (tests/stages.rs STAGES) are broken:\n{}",
        bad.join("\n")
    );
}

#[test]
fn the_checker_resolves_paths_but_not_comments() {
    let src = r#"
        /// See [`crate::render`].
        // crate::render::x
        use crate::aggregate::{Aggregate, check::Issue};
        use crate::{read, units::fmt_ns};
        fn f() { super::dataset_io::x(); super::super::render::y(); }
        mod tests { use super::*; fn g() { super::super::x::y(); } }
        #[cfg(test)] mod unit { fn h() { crate::report::analyze(); } }
    "#;
    let mut paths = Vec::new();
    let module = ["aggregate".to_string(), "check".to_string()];
    crate_paths(src.parse().unwrap(), &module, &mut paths);
    let targets: Vec<Option<String>> = paths.iter().map(|(m, p)| target_module(m, p)).collect();
    assert_eq!(
        targets,
        [
            Some("aggregate".to_string()),
            Some("read".to_string()),
            Some("units".to_string()),
            Some("aggregate".to_string()),
            Some("render".to_string()),
            Some("aggregate".to_string()),
        ]
    );
}

#[test]
fn the_checker_flags_a_later_stage() {
    let dir = std::env::temp_dir().join(format!("h5prov-stages-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("aggregate")).unwrap();
    std::fs::write(
        dir.join("aggregate/mod.rs"),
        "use crate::insights::Insight;\nuse crate::read::Error;\n",
    )
    .unwrap();
    std::fs::write(dir.join("oops.rs"), "").unwrap();
    std::fs::create_dir_all(dir.join("live")).unwrap();
    std::fs::write(dir.join("export.rs"), "use crate::live::run;\n").unwrap();
    std::fs::write(
        dir.join("live/top.rs"),
        "fn f() { super::super::export::x(); }\n",
    )
    .unwrap();
    let bad = problems(&dir);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(
        bad,
        [
            "aggregate/mod.rs (stage 2) imports `crate::insights::Insight` of the later stage 4",
            "oops.rs: module `oops` has no stage",
            "the top-level modules export, live import each other in a cycle",
        ]
    );
}

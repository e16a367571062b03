//! Every `extern "C"` function of the connector is one guarded call (issue 15, item 3).
//!
//! HDF5 calls into h5prov only through `extern "C"` functions, and a panic that reaches one
//! of them aborts the host application. So each body is exactly one call to a guard of
//! `connector/src/ffi/mod.rs` (`guard`, or `guard_unwind` where there is no HDF5 error stack
//! to report to), whose first argument is the failure value of the function's return type,
//! with nothing before or after it: all work, even reading an argument, runs inside the
//! guard's closure. And they all live in `connector/src/ffi/`.
//!
//! This test reads every `.rs` file under `connector/src` with `syn`, checks every function
//! with a non-Rust ABI, and also scans the token trees of macros (the `macro_rules!`
//! trampolines of `ffi/table.rs` and the plugin entry points of `ffi/plugin.rs` are only
//! tokens to `syn`): after `extern "C" fn name(...) -> T`, the brace group is taken as the
//! body, its `$metavariables` and `$(...)` repetitions flattened to plain tokens, and checked
//! the same way.
#![deny(unsafe_code)]

use proc_macro2::{Delimiter, Group, TokenStream, TokenTree};
use quote::ToTokens;
use std::path::{Path, PathBuf};
use syn::visit::Visit;

/// The guards of `ffi/mod.rs` and their number of arguments (failure value first).
const GUARDS: &[(&str, usize)] = &[("guard", 3), ("guard_unwind", 2)];

/// One `extern "C"` function found in the sources.
#[derive(Debug)]
struct Found {
    file: String,
    name: String,
    /// From a macro's token tree rather than a parsed item.
    in_macro: bool,
    /// `None` when the body is one guarded call.
    problem: Option<String>,
}

/// The failure value `ret` calls for, checked against the guard's first argument.
fn check_failure_value(ret: &syn::ReturnType, fail: &syn::Expr) -> Result<(), String> {
    let shown = fail.to_token_stream().to_string();
    let last_segment = |e: &syn::Expr| match e {
        syn::Expr::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
        syn::Expr::Call(c) if c.args.is_empty() => match &*c.func {
            syn::Expr::Path(p) => p.path.segments.last().map(|s| format!("{}()", s.ident)),
            _ => None,
        },
        _ => None,
    };
    let (want, ok) = match ret {
        syn::ReturnType::Default => (
            "()",
            matches!(fail, syn::Expr::Tuple(t) if t.elems.is_empty()),
        ),
        syn::ReturnType::Type(_, ty) => match &**ty {
            syn::Type::Ptr(p) if p.mutability.is_some() => (
                "std::ptr::null_mut()",
                last_segment(fail).as_deref() == Some("null_mut()"),
            ),
            syn::Type::Ptr(_) => (
                "std::ptr::null()",
                last_segment(fail).as_deref() == Some("null()"),
            ),
            syn::Type::Path(p) => match p.path.segments.last().map(|s| s.ident.to_string()) {
                Some(t) if t == "herr_t" => ("-1", shown == "- 1"),
                Some(t) if t == "H5PL_type_t" => (
                    "H5PL_TYPE_ERROR",
                    last_segment(fail).as_deref() == Some("H5PL_TYPE_ERROR"),
                ),
                _ => {
                    return Err(format!(
                        "no known failure value for return type `{}`: add it to \
                         check_failure_value in connector/tests/guards.rs",
                        ty.to_token_stream()
                    ))
                }
            },
            other => {
                return Err(format!(
                    "no known failure value for return type `{}`",
                    other.to_token_stream()
                ))
            }
        },
    };
    if ok {
        Ok(())
    } else {
        Err(format!(
            "the guard's failure value is `{shown}`, expected `{want}` for this return type"
        ))
    }
}

/// The body must be a single expression (no `;`, no `let`, no `unsafe { }` around it) that
/// is a call to one of [`GUARDS`] with the right failure value.
fn check_body(ret: &syn::ReturnType, body: &syn::Block) -> Result<(), String> {
    let [stmt] = body.stmts.as_slice() else {
        return Err(format!(
            "the body has {} statements; it must be exactly one guard call, with all work \
             inside the guard's closure",
            body.stmts.len()
        ));
    };
    let syn::Stmt::Expr(expr, None) = stmt else {
        return Err(
            "the body's only statement must be the guard call itself, as the tail \
                    expression (not a `let`, an item or a `;`-terminated statement)"
                .into(),
        );
    };
    let syn::Expr::Call(call) = expr else {
        return Err(format!(
            "the body is `{}`, not a call to a guard",
            abbreviate(&expr.to_token_stream().to_string())
        ));
    };
    let syn::Expr::Path(func) = &*call.func else {
        return Err("the body calls something that is not a guard function".into());
    };
    let name = func
        .path
        .segments
        .last()
        .map(|s| s.ident.to_string())
        .unwrap_or_default();
    let Some(&(_, nargs)) = GUARDS.iter().find(|(g, _)| *g == name) else {
        return Err(format!(
            "the body calls `{}`, not one of the guards {:?}",
            func.path.to_token_stream(),
            GUARDS.iter().map(|g| g.0).collect::<Vec<_>>()
        ));
    };
    if call.args.len() != nargs {
        return Err(format!(
            "`{name}` takes {nargs} arguments, the body passes {}",
            call.args.len()
        ));
    }
    check_failure_value(ret, &call.args[0])
}

fn abbreviate(s: &str) -> String {
    match s.char_indices().nth(80) {
        Some((i, _)) => format!("{} ...", &s[..i]),
        None => s.to_string(),
    }
}

/// True for `extern "C"`, `extern "C-unwind"`, `extern "system"`, bare `extern`: any ABI a
/// C caller uses.
fn is_foreign_abi(abi: &Option<syn::Abi>) -> bool {
    abi.as_ref()
        .is_some_and(|a| a.name.as_ref().is_none_or(|n| n.value() != "Rust"))
}

/// A macro's tokens with `$name` made plain `name` (`$crate` becomes `crate`) and each
/// `$( ... ) sep? op` repetition replaced by its contents once, so that a transcriber's body
/// parses as ordinary Rust.
fn flatten_metavariables(ts: TokenStream) -> TokenStream {
    let mut out = Vec::new();
    let mut it = ts.into_iter().peekable();
    while let Some(tt) = it.next() {
        match tt {
            TokenTree::Punct(p) if p.as_char() == '$' => match it.next() {
                Some(TokenTree::Ident(id)) => out.push(TokenTree::Ident(id)),
                Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Parenthesis => {
                    out.extend(flatten_metavariables(g.stream()));
                    // An optional separator, then the repetition operator.
                    let is_op = |t: Option<&TokenTree>| matches!(t, Some(TokenTree::Punct(p)) if matches!(p.as_char(), '*' | '+' | '?'));
                    if !is_op(it.peek()) {
                        it.next();
                    }
                    if is_op(it.peek()) {
                        it.next();
                    }
                }
                Some(other) => {
                    out.push(TokenTree::Punct(p));
                    out.push(other);
                }
                None => out.push(TokenTree::Punct(p)),
            },
            TokenTree::Group(g) => {
                let mut ng = Group::new(g.delimiter(), flatten_metavariables(g.stream()));
                ng.set_span(g.span());
                out.push(TokenTree::Group(ng));
            }
            other => out.push(other),
        }
    }
    out.into_iter().collect()
}

fn is_ident(t: Option<&TokenTree>, name: &str) -> bool {
    matches!(t, Some(TokenTree::Ident(i)) if i == name)
}

/// Finds `extern "ABI"? fn name (...) (-> T)? { body }` in a macro's token tree (at any
/// depth) and checks each body.
fn scan_macro_tokens(ts: TokenStream, file: &str, found: &mut Vec<Found>) {
    let toks: Vec<TokenTree> = ts.into_iter().collect();
    for (i, t) in toks.iter().enumerate() {
        if let TokenTree::Group(g) = t {
            scan_macro_tokens(g.stream(), file, found);
        }
        if !is_ident(Some(t), "extern") {
            continue;
        }
        let mut j = i + 1;
        if let Some(TokenTree::Literal(lit)) = toks.get(j) {
            if lit.to_string() == "\"Rust\"" {
                continue;
            }
            j += 1;
        }
        if !is_ident(toks.get(j), "fn") {
            continue; // `extern crate`, `extern "C" { ... }`
        }
        j += 1;
        // The name: `name` or `$name`. `extern "C" fn(...)` is a function pointer type.
        let name = match (toks.get(j), toks.get(j + 1)) {
            (Some(TokenTree::Ident(n)), _) => {
                j += 1;
                n.to_string()
            }
            (Some(TokenTree::Punct(p)), Some(TokenTree::Ident(n))) if p.as_char() == '$' => {
                j += 2;
                format!("${n}")
            }
            _ => continue,
        };
        let mut record = |problem: Option<String>| {
            found.push(Found {
                file: file.to_string(),
                name: name.clone(),
                in_macro: true,
                problem,
            })
        };
        // Parameters, then everything up to the body's brace group is the return type.
        let Some(TokenTree::Group(params)) = toks.get(j) else {
            record(Some("cannot find the parameter list".into()));
            continue;
        };
        if params.delimiter() != Delimiter::Parenthesis {
            record(Some("cannot find the parameter list".into()));
            continue;
        }
        j += 1;
        let start = j;
        while !matches!(toks.get(j), Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Brace)
        {
            if j >= toks.len() {
                break;
            }
            j += 1;
        }
        let Some(TokenTree::Group(body)) = toks.get(j) else {
            record(Some("cannot find the body".into()));
            continue;
        };
        let ret_tokens: TokenStream =
            flatten_metavariables(toks[start..j].iter().cloned().collect());
        let ret = match syn::parse2::<syn::ReturnType>(ret_tokens) {
            Ok(r) => r,
            Err(e) => {
                record(Some(format!("cannot parse the return type: {e}")));
                continue;
            }
        };
        let body_tokens = flatten_metavariables(TokenTree::Group(body.clone()).into());
        let problem = match syn::parse2::<syn::Block>(body_tokens) {
            Ok(block) => check_body(&ret, &block).err(),
            Err(e) => Some(format!("cannot parse the body: {e}")),
        };
        record(problem);
    }
}

struct Scanner<'a> {
    file: &'a str,
    found: Vec<Found>,
}

impl Scanner<'_> {
    fn item(&mut self, sig: &syn::Signature, block: &syn::Block) {
        if is_foreign_abi(&sig.abi) {
            self.found.push(Found {
                file: self.file.to_string(),
                name: sig.ident.to_string(),
                in_macro: false,
                problem: check_body(&sig.output, block).err(),
            });
        }
    }
}

impl<'ast> Visit<'ast> for Scanner<'_> {
    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        self.item(&f.sig, &f.block);
        syn::visit::visit_item_fn(self, f);
    }

    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        self.item(&f.sig, &f.block);
        syn::visit::visit_impl_item_fn(self, f);
    }

    fn visit_trait_item_fn(&mut self, f: &'ast syn::TraitItemFn) {
        if let Some(block) = &f.default {
            self.item(&f.sig, block);
        }
        syn::visit::visit_trait_item_fn(self, f);
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        scan_macro_tokens(m.tokens.clone(), self.file, &mut self.found);
        syn::visit::visit_macro(self, m);
    }
}

/// All `extern "C"` functions of one source text.
fn scan_source(file: &str, text: &str) -> Vec<Found> {
    let ast = syn::parse_file(text).unwrap_or_else(|e| panic!("{file}: {e}"));
    let mut s = Scanner {
        file,
        found: Vec::new(),
    };
    s.visit_file(&ast);
    s.found
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn every_extern_c_body_is_one_guard_call_and_lives_in_ffi() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let src = root.join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let mut all = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(root).unwrap().display().to_string();
        let text = std::fs::read_to_string(f).unwrap();
        all.extend(scan_source(&rel, &text));
    }
    let mut problems = Vec::new();
    for f in &all {
        if !f.file.starts_with("src/ffi/") {
            problems.push(format!(
                "{}: `extern \"C\" fn {}` outside connector/src/ffi/: the C boundary lives in ffi/",
                f.file, f.name
            ));
        }
        if let Some(p) = &f.problem {
            let how = if f.in_macro { " (in a macro)" } else { "" };
            problems.push(format!("{}: `{}`{how}: {p}", f.file, f.name));
        }
    }
    assert!(
        problems.is_empty(),
        "{} of {} extern \"C\" functions break the rule (see connector/SAFETY.md):\n{}",
        problems.len(),
        all.len(),
        problems.join("\n")
    );
    // The scan must see what is known to be there: the table's five macro trampolines, the
    // plugin entry points, the fork handlers and the hand-written callbacks.
    let count = |file: &str, in_macro: bool| {
        all.iter()
            .filter(|f| f.file == file && f.in_macro == in_macro)
            .count()
    };
    assert_eq!(count("src/ffi/table.rs", true), 5, "{all:#?}");
    assert_eq!(count("src/ffi/plugin.rs", true), 2, "{all:#?}");
    assert_eq!(count("src/ffi/sys.rs", false), 3, "{all:#?}");
    let callbacks = all
        .iter()
        .filter(|f| f.file.starts_with("src/ffi/callbacks/") && !f.in_macro)
        .count();
    assert!(callbacks >= 30, "{all:#?}");
}

// ---- the checker itself: what it accepts and what it rejects ------------------------------

fn problems_in(src: &str) -> Vec<String> {
    let found = scan_source("src/ffi/example.rs", src);
    assert!(!found.is_empty(), "nothing found in {src}");
    found.into_iter().filter_map(|f| f.problem).collect()
}

#[test]
fn the_checker_accepts_one_guard_call() {
    for ok in [
        r#"unsafe extern "C" fn f(p: *mut c_void) -> herr_t { guard(-1, Op::X, || Ok(0)) }"#,
        r#"extern "C" fn f() -> *mut c_void { super::guard(std::ptr::null_mut(), Op::X, || g()) }"#,
        r#"extern "C" fn f() -> *const c_void { crate::ffi::guard_unwind(std::ptr::null(), || g()) }"#,
        r#"extern "C" fn f() { guard_unwind((), g) }"#,
        r#"macro_rules! m { ($f:ident $($a:ident),*) => {
               unsafe extern "C" fn $f($($a: i32,)*) -> herr_t {
                   guard(-1, Op::X, || { let s = $($a +)* 0; unsafe { g(s) } })
               }
           }; }"#,
    ] {
        assert_eq!(problems_in(ok), Vec::<String>::new(), "{ok}");
    }
}

#[test]
fn the_checker_rejects_work_outside_the_guard() {
    for bad in [
        // work before the guard
        r#"unsafe extern "C" fn f(a: *mut A) -> herr_t { let s = sub_of!(a); guard(-1, Op::X, || Ok(s)) }"#,
        // work after the guard
        r#"extern "C" fn f() -> herr_t { let r = guard(-1, Op::X, || Ok(0)); flush(); r }"#,
        // a guarded helper is not a guard: its failure value is not visible here
        r#"unsafe extern "C" fn f() -> herr_t { unsafe { shape_call(Op::X, 0, o, r, |o, v| 0) } }"#,
        // no guard at all
        r#"extern "C" fn f() -> u32 { 7 }"#,
        // a statement, not the tail expression
        r#"extern "C" fn f() { guard_unwind((), g); }"#,
        // the wrong failure value for the return type
        r#"extern "C" fn f() -> herr_t { guard(0, Op::X, || Ok(0)) }"#,
        r#"extern "C" fn f() -> *mut c_void { guard(std::ptr::null(), Op::X, || g()) }"#,
        // the same in a macro's trampoline
        r#"macro_rules! m { ($f:ident, $sub:expr) => {
               unsafe extern "C" fn $f(o: *mut c_void) -> herr_t {
                   let sub: u32 = $sub;
                   guard(-1, Op::X, || unsafe { g(sub) })
               }
           }; }"#,
        r#"macro_rules! m { () => {
               #[no_mangle] pub extern "C" fn H5PLget_plugin_info() -> *const c_void { info().cast() }
           }; }"#,
    ] {
        assert_eq!(problems_in(bad).len(), 1, "accepted: {bad}");
    }
}

#[test]
fn the_checker_finds_extern_fns_outside_ffi() {
    let found = scan_source(
        "src/trace/record.rs",
        r#"fn f() { std::sync::Once::new().call_once(|| { extern "C" fn h() { guard_unwind((), g) } }); }"#,
    );
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].name, "h");
}

//! A scratch directory lives as long as its [`Scratch`](h5prov_tests::Scratch) guard. A
//! method called on the guard as a temporary (`scratch("x").join("y")`) takes a path out of
//! it, and the guard, dropped at the end of that statement, removes the directory before
//! the test uses the path: the test may still pass when the program it runs makes the
//! directory again, so nothing else catches it. This test parses the test sources with
//! `syn` (as `connector/tests/guards.rs` does) and finds every such call.

use quote::ToTokens;
use syn::punctuated::Punctuated;
use syn::visit::Visit;

/// Collects the method calls on a `scratch(..)`/`Scratch::fresh(..)` temporary, other than
/// `keep` (which takes the directory out of the guard for good).
#[derive(Default)]
struct Temporaries(Vec<String>);

/// Whether `e` makes a guard: a call of `scratch` or of `Scratch::fresh`.
fn makes_guard(e: &syn::Expr) -> bool {
    match e {
        syn::Expr::Paren(p) => makes_guard(&p.expr),
        syn::Expr::Call(c) => match &*c.func {
            syn::Expr::Path(p) => {
                let segs: Vec<String> = p
                    .path
                    .segments
                    .iter()
                    .map(|s| s.ident.to_string())
                    .collect();
                segs == ["scratch"] || segs.ends_with(&["Scratch".into(), "fresh".into()])
            }
            _ => false,
        },
        _ => false,
    }
}

impl<'ast> Visit<'ast> for Temporaries {
    fn visit_expr_method_call(&mut self, m: &'ast syn::ExprMethodCall) {
        if makes_guard(&m.receiver) && m.method != "keep" {
            self.0.push(m.to_token_stream().to_string());
        }
        syn::visit::visit_expr_method_call(self, m);
    }

    /// Macro arguments are only tokens to `syn`: those that parse as comma-separated
    /// expressions (`assert!`, `format!`, `vec!`) are searched too.
    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        if let Ok(args) =
            mac.parse_body_with(Punctuated::<syn::Expr, syn::Token![,]>::parse_terminated)
        {
            for e in &args {
                self.visit_expr(e);
            }
        }
        syn::visit::visit_macro(self, mac);
    }
}

/// The method calls on a temporary guard in Rust source `src`.
fn temporaries(src: &str) -> Vec<String> {
    let file = syn::parse_file(src).unwrap_or_else(|e| panic!("parse: {e}"));
    let mut t = Temporaries::default();
    t.visit_file(&file);
    t.0
}

#[test]
fn the_scan_finds_a_method_on_a_temporary_guard() {
    let bad = r#"fn f() {
        let d = scratch("x").join("ds");
        let e = h5prov_tests::Scratch::fresh(p.join("a")).to_path_buf();
        assert!(run(&scratch("y").join("z")), "{}", 1);
    }"#;
    assert_eq!(
        temporaries(bad),
        [
            r#"scratch ("x") . join ("ds")"#,
            r#"h5prov_tests :: Scratch :: fresh (p . join ("a")) . to_path_buf ()"#,
            r#"scratch ("y") . join ("z")"#,
        ]
    );
    let good = r#"pub fn scratch(name: &str) -> Scratch { Scratch::fresh(tmp().join(name)) }
    fn f() {
        let d = scratch("x");
        let k = scratch("y").keep();
        run(&scratch("z"));
        // scratch("in a comment").join("w")
        let s = "scratch(\"in a string\").join(\"w\")";
        let m = make_scratch("v").join("w");
    }"#;
    assert_eq!(temporaries(good), Vec::<String>::new());
}

#[test]
fn no_test_calls_a_method_on_a_temporary_scratch_guard() {
    let repo = h5prov_tests::repo();
    let mut bad = Vec::new();
    for dir in ["tests/tests", "tests/src", "bench/tests"] {
        for e in std::fs::read_dir(repo.join(dir)).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_none_or(|x| x != "rs") {
                continue;
            }
            let src = std::fs::read_to_string(&p).unwrap();
            for call in temporaries(&src) {
                bad.push(format!("{}: {call}", p.display()));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "a method on a temporary scratch guard; bind the guard first \
         (`let d = scratch(..);`), or take it with `.keep()`:\n{}",
        bad.join("\n")
    );
}

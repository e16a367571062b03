//! A scratch directory lives as long as its [`Scratch`](h5prov_tests::Scratch) guard. A
//! method called on the guard as a temporary (`scratch("x").join("y")`) takes a path out of
//! it, and the guard, dropped at the end of that statement, removes the directory before
//! the test uses the path: the test may still pass when the program it runs makes the
//! directory again, so nothing else catches it. This scan of the test sources does.

use std::path::Path;

/// Byte offsets of the methods called on a `scratch(..)`/`Scratch::fresh(..)` temporary
/// in `src`, other than `keep` (which takes the directory out of the guard for good).
fn temporaries(src: &str) -> Vec<(usize, String)> {
    let b = src.as_bytes();
    let mut found = Vec::new();
    for pat in ["scratch(", "Scratch::fresh("] {
        let mut from = 0;
        while let Some(at) = src[from..].find(pat).map(|i| from + i) {
            from = at + pat.len();
            // A call, not the end of another name (`make_scratch(`) or a definition.
            let before = src[..at].trim_end();
            if src[..at]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_alphanumeric() || c == '_')
                || before.ends_with("fn")
            {
                continue;
            }
            let mut depth = 1;
            let mut i = from;
            while i < b.len() && depth > 0 {
                match b[i] {
                    b'(' => depth += 1,
                    b')' => depth -= 1,
                    _ => {}
                }
                i += 1;
            }
            let rest = src[i..].trim_start();
            if let Some(m) = rest.strip_prefix('.') {
                let name: String = m
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if name != "keep" {
                    found.push((at, name));
                }
            }
        }
    }
    found
}

#[test]
fn the_scan_finds_a_method_on_a_temporary_guard() {
    let bad = "let d = scratch(\"x\").join(\"ds\");\nlet e = Scratch::fresh(p.join(\"a\")).to_path_buf();";
    let got: Vec<String> = temporaries(bad).into_iter().map(|f| f.1).collect();
    assert_eq!(got, ["join", "to_path_buf"]);
    let good = "let d = scratch(\"x\");\nlet k = scratch(\"y\").keep();\nrun(&scratch(\"z\"));\npub fn scratch(name: &str) -> Scratch {";
    assert_eq!(temporaries(good), []);
}

#[test]
fn no_test_calls_a_method_on_a_temporary_scratch_guard() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let mut bad = Vec::new();
    for dir in ["tests/tests", "tests/src", "bench/tests"] {
        for e in std::fs::read_dir(repo.join(dir)).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_none_or(|x| x != "rs") || p.ends_with("scratch_guard.rs") {
                continue;
            }
            let src = std::fs::read_to_string(&p).unwrap();
            for (at, name) in temporaries(&src) {
                let line = src[..at].matches('\n').count() + 1;
                bad.push(format!(
                    "{}:{line}: .{name}() on a temporary guard",
                    p.display()
                ));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "bind the guard first (`let d = scratch(..);`), or take it with `.keep()`:\n{}",
        bad.join("\n")
    );
}

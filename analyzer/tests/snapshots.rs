//! Snapshot tests of every renderer against committed files in tests/expected/
//! (`H5PROV_BLESS=1 cargo test` rewrites them; review the diff).

mod common;

use h5prov_analyzer::analysis::Report;
use h5prov_analyzer::insights::Thresholds;
use h5prov_analyzer::read::ReadOptions;
use h5prov_analyzer::render::compare;
use h5prov_analyzer::render::{self, terminal::TermOptions};
use h5prov_analyzer::report::analyze;

fn report(dir: &str) -> Report {
    let path = common::pkg_dir().join("tests/fixtures").join(dir);
    let agg = h5prov_analyzer::load(&path, &ReadOptions { lenient: true }, &|_| {}).unwrap();
    analyze(
        agg,
        &Thresholds::default(),
        &[format!("tests/fixtures/{dir}")],
    )
}

#[test]
fn terminal() {
    for dir in ["mpi4", "serial", "malformed"] {
        let out = render::terminal::render(
            &report(dir),
            &TermOptions {
                color: false,
                top: 15,
            },
        );
        common::snapshot(&format!("{dir}.txt"), &out);
    }
}

#[test]
fn terminal_color() {
    let out = render::terminal::render(
        &report("serial"),
        &TermOptions {
            color: true,
            top: 5,
        },
    );
    common::snapshot("serial.color.txt", &out);
}

#[test]
fn json() {
    for dir in ["mpi4", "serial"] {
        common::snapshot(&format!("{dir}.json"), &render::json(&report(dir)));
    }
}

#[test]
fn csv_tables() {
    let mut all = String::new();
    for (name, bytes) in render::csv_out::tables(&report("mpi4")) {
        all.push_str(&format!("== {name} ==\n"));
        all.push_str(&String::from_utf8(bytes).unwrap());
    }
    common::snapshot("mpi4.csv.txt", &all);
}

#[test]
fn html() {
    common::snapshot("mpi4.html", &render::html::render(&report("mpi4"), 15));
}

#[test]
fn compare_renderers() {
    let c = compare::compare(&report("mpi4"), &report("malformed"));
    common::snapshot("compare.txt", &compare::render_terminal(&c, 30));
    common::snapshot("compare.json", &compare::render_json(&c));
}

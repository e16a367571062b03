//! The Done-when workflow of issue 34, run for real through h5prov:
//! 1. a simulation of two processes (one Slurm-like job, ranks 0 and 1 one after the other,
//!    `tests/c/workflow.c`) writes `sim.h5:/fields/u` and `/fields/v`;
//! 2. an h5py analysis from the PyPI wheel (its own HDF5 2.x) reads `/fields/u` and writes
//!    `ana.h5:/stats` (`tests/python/h5py_analysis.py`);
//! 3. a C program reads `ana.h5:/stats`;
//! 4. the simulation runs again and truncates `sim.h5`.
//!
//! Each job is traced into a directory of its own, at `level=summary` and at the default
//! level, and `h5prov export --prov` joins them. The PROV-JSON loads with the reference
//! `prov` package (PyPI) and converts to PROV-N; the Turtle parses with `rdflib` (PyPI),
//! which runs the SPARQL query of `docs/PROVENANCE.md`; `h5prov lineage ana.h5:/stats`
//! prints the chain. In every form the analysis's `/stats` derives from the version of
//! `/fields/u` the first simulation left, never from the re-run's.

use h5prov_tests::*;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The trace directories of the workflow's jobs, in the order they ran.
struct Workflow {
    dir: Scratch,
    jobs: Vec<PathBuf>,
}

/// The wheels venv's Python running `tests/python/<script>` in `dir`, with no HDF5
/// variables of the workspace (h5py brings its own HDF5).
fn wheel_python(script: &str, args: &[&str], dir: &Path) -> Run {
    Run::python(&repo().join("tests/python").join(script), args, dir)
}

/// `run` as task `rank` of the Slurm job `job` (h5prov records both in the meta).
fn in_job(run: Run, job: &str, rank: usize, ntasks: usize) -> Run {
    let mut run = run;
    for v in JOB_VARS {
        run = run.env_remove(v);
    }
    run.env("SLURM_JOB_ID", job)
        .env("SLURM_PROCID", &rank.to_string())
        .env("SLURM_NTASKS", &ntasks.to_string())
}

/// Runs the workflow in a fresh scratch directory, every process traced with `options`.
fn run_workflow(tag: &str, options: &str) -> Workflow {
    let dir = scratch(&format!("prov-workflow-{tag}"));
    let exe = c_program("workflow");
    let s = dir.to_str().unwrap().to_string();
    let mut jobs = Vec::new();
    let simulation = |job: &str| {
        let traces = dir.join(format!("traces-{job}"));
        for rank in 0..2 {
            let r = rank.to_string();
            let run = Run::with_h5prov(&exe, &["sim", &r], &dir, &traces, options);
            in_job(run, job, rank, 2).ok();
        }
        traces
    };
    jobs.push(simulation("1001"));
    let traces = dir.join("traces-1002");
    let run = wheel_python("h5py_analysis.py", &[&s], &dir).h5prov(&traces, options);
    let stats = in_job(run, "1002", 0, 1).ok();
    // u is 0..64: mean 31.5, min 0, max 63.
    assert_eq!(stats.trim(), "31.5 0 63", "the analysis");
    jobs.push(traces);
    let traces = dir.join("traces-1003");
    let run = Run::with_h5prov(&exe, &["post"], &dir, &traces, options);
    assert_eq!(in_job(run, "1003", 0, 1).ok().trim(), "31.5 0 63", "post");
    jobs.push(traces);
    jobs.push(simulation("1004"));
    Workflow { dir, jobs }
}

impl Workflow {
    /// `h5prov export --prov OUT` of every job, with `extra` arguments; returns OUT.
    fn export(&self, name: &str, extra: &[&str]) -> PathBuf {
        let out = self.dir.join(name);
        let mut args = vec!["export", "--prov", out.to_str().unwrap()];
        args.extend_from_slice(extra);
        args.extend(self.jobs.iter().map(|j| j.to_str().unwrap()));
        h5prov_ok(&args);
        out
    }
}

/// The relations of `section` of a PROV-JSON document as `(first, second)` by the two
/// keys given.
fn relations(doc: &Value, section: &str, a: &str, b: &str) -> BTreeSet<(String, String)> {
    doc[section]
        .as_object()
        .map(|m| {
            m.values()
                .map(|v| {
                    let s = |k: &str| v[k].as_str().unwrap_or_default().to_string();
                    (s(a), s(b))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// What the document says of the workflow, by role.
struct Roles {
    /// Process id of (job, rank).
    process: std::collections::BTreeMap<(String, i64), String>,
    /// The `/fields/u` entity of each `sim.h5` version, by the process that generated it.
    u_by: std::collections::BTreeMap<String, String>,
    /// The `/stats` entity.
    stats: String,
}

fn roles(doc: &Value) -> Roles {
    let acts = doc["activity"].as_object().expect("activities");
    let mut process = std::collections::BTreeMap::new();
    for (id, a) in acts {
        if a["prov:type"]["$"] == "h5prov:Process" {
            let job = a["h5prov:job"].as_str().expect("a job id").to_string();
            process.insert((job, a["h5prov:rank"].as_i64().unwrap()), id.clone());
        }
    }
    let ents = doc["entity"].as_object().expect("entities");
    let datasets = |path: &str| -> Vec<String> {
        ents.iter()
            .filter(|(_, e)| e["prov:type"]["$"] == "h5prov:Dataset" && e["h5prov:path"] == path)
            .map(|(id, _)| id.clone())
            .collect()
    };
    let generated = relations(doc, "wasGeneratedBy", "prov:entity", "prov:activity");
    let u_by = datasets("/fields/u")
        .into_iter()
        .filter_map(|u| {
            let by = generated.iter().find(|(e, _)| *e == u)?;
            Some((by.1.clone(), u))
        })
        .collect();
    let stats = datasets("/stats");
    assert_eq!(
        stats.len(),
        1,
        "one /stats (h5py's anonymous dataset, by its link name): {stats:?}"
    );
    Roles {
        process,
        u_by,
        stats: stats[0].clone(),
    }
}

/// The PROV-JSON export: the relations that carry the workflow's lineage.
fn check_json(w: &Workflow, ctx: &str) -> (Value, Roles) {
    let out = w.export("prov.json", &[]);
    let doc: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    let r = roles(&doc);
    let p = |job: &str, rank: i64| {
        r.process
            .get(&(job.to_string(), rank))
            .unwrap_or_else(|| {
                panic!(
                    "no process of job {job} rank {rank}: {:?}\n{ctx}",
                    r.process
                )
            })
            .clone()
    };
    let (sim0, sim1, ana, post) = (p("1001", 0), p("1001", 1), p("1002", 0), p("1003", 0));
    let (re0, re1) = (p("1004", 0), p("1004", 1));
    assert_eq!(r.process.len(), 6, "{ctx}");

    // Every process is started by its job, an activity of its own.
    let started = relations(&doc, "wasStartedBy", "prov:activity", "prov:starter");
    for ((job, _), id) in &r.process {
        let j = format!("h5prov:job-{job}");
        assert!(
            started.contains(&(id.clone(), j.clone())),
            "{id} in {j}: {started:?}\n{ctx}"
        );
        assert_eq!(doc["activity"][&j]["prov:type"]["$"], "h5prov:Job", "{ctx}");
    }

    // The four versions of /fields/u, one per simulation process; the analysis used the
    // one the first simulation's rank 1 left.
    let u_first = r
        .u_by
        .get(&sim1)
        .expect("u of the first run's rank 1")
        .clone();
    let u_rerun = r.u_by.get(&re1).expect("u of the re-run's rank 1").clone();
    assert_eq!(r.u_by.len(), 4, "{:?}\n{ctx}", r.u_by);
    let used = relations(&doc, "used", "prov:activity", "prov:entity");
    assert!(
        used.contains(&(ana.clone(), u_first.clone())),
        "{used:?}\n{ctx}"
    );
    assert!(
        used.contains(&(post.clone(), r.stats.clone())),
        "{used:?}\n{ctx}"
    );

    // Derivation: /stats from what the analysis read before writing it, and only that.
    let derived: Vec<_> = doc["wasDerivedFrom"]
        .as_object()
        .expect("wasDerivedFrom")
        .values()
        .filter(|d| d["prov:generatedEntity"] == r.stats.as_str())
        .collect();
    assert_eq!(derived.len(), 1, "{derived:?}\n{ctx}");
    assert_eq!(derived[0]["prov:usedEntity"], u_first.as_str(), "{ctx}");
    assert_eq!(
        derived[0]["h5prov:inferred"], true,
        "marked inferred\n{ctx}"
    );

    // Who informed whom, and the re-run informed nobody of the first run.
    let informed = relations(&doc, "wasInformedBy", "prov:informed", "prov:informant");
    for (a, b) in [(&sim1, &sim0), (&ana, &sim1), (&post, &ana), (&re1, &re0)] {
        assert!(
            informed.contains(&(a.clone(), b.clone())),
            "{a} informed by {b}: {informed:?}\n{ctx}"
        );
    }
    assert!(
        !informed
            .iter()
            .any(|(a, b)| [&ana, &post].contains(&a) && [&re0, &re1].contains(&b)),
        "{informed:?}\n{ctx}"
    );
    // The re-run truncated the version the analysis read.
    let invalidated = relations(&doc, "wasInvalidatedBy", "prov:entity", "prov:activity");
    let members = relations(&doc, "hadMember", "prov:collection", "prov:entity");
    let version_of = |e: &str| members.iter().find(|(_, m)| m == e).unwrap().0.clone();
    assert!(
        invalidated.contains(&(version_of(&u_first), re0.clone())),
        "{invalidated:?}\n{ctx}"
    );
    assert_ne!(version_of(&u_first), version_of(&u_rerun), "{ctx}");
    // /stats is attributed to the user.
    let attributed = relations(&doc, "wasAttributedTo", "prov:entity", "prov:agent");
    assert!(
        attributed.iter().any(|(e, _)| *e == r.stats),
        "{attributed:?}\n{ctx}"
    );

    // The reference implementation reads it and writes PROV-N.
    let script = "import sys\n\
        from prov.model import ProvDocument\n\
        doc = ProvDocument.deserialize(source=sys.argv[1], format='json')\n\
        print(doc.get_provn())\n";
    let py = std::process::Command::new(prov_python())
        .args(["-c", script])
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        py.status.success(),
        "{}\n{ctx}",
        describe_output("prov", &py)
    );
    let provn = String::from_utf8(py.stdout).unwrap();
    for term in [
        "wasInformedBy(",
        "wasDerivedFrom(",
        "wasStartedBy(",
        "h5prov:inferred",
    ] {
        assert!(provn.contains(term), "PROV-N lacks {term}\n{ctx}");
    }
    (doc, r)
}

/// The first ```sparql block of docs/PROVENANCE.md.
fn documented_query() -> String {
    let doc = std::fs::read_to_string(repo().join("docs/PROVENANCE.md")).unwrap();
    let start = doc
        .find("```sparql\n")
        .expect("a ```sparql block in docs/PROVENANCE.md")
        + 10;
    let len = doc[start..].find("```").expect("the end of the block");
    doc[start..start + len].to_string()
}

/// The Turtle export parses with rdflib, and the documented query answers with the job and
/// user of `/stats` and the first run's `/fields/u`.
fn check_turtle(w: &Workflow, doc: &Value, r: &Roles, ctx: &str) {
    let out = w.export("prov.ttl", &["--prov-format", "turtle"]);
    let script = "import json, sys\n\
        import rdflib\n\
        g = rdflib.Graph()\n\
        g.parse(sys.argv[1], format='turtle')\n\
        rows = [[str(v) for v in row] for row in g.query(sys.argv[2])]\n\
        print(json.dumps({'triples': len(g), 'rows': rows}))\n";
    let py = std::process::Command::new(prov_python())
        .args(["-c", script])
        .arg(&out)
        .arg(documented_query())
        .output()
        .unwrap();
    assert!(
        py.status.success(),
        "{}\n{ctx}",
        describe_output("rdflib", &py)
    );
    let got: Value = serde_json::from_slice(&py.stdout).unwrap();
    assert!(got["triples"].as_u64().unwrap() > 100, "{got}\n{ctx}");
    let user = std::process::Command::new("id")
        .arg("-un")
        .output()
        .unwrap();
    let user = String::from_utf8(user.stdout).unwrap().trim().to_string();
    let ns = doc["prefix"]["h5prov"].as_str().unwrap();
    let iri = |id: &str| format!("{ns}{}", id.strip_prefix("h5prov:").unwrap());
    let ana_process = r.process[&("1002".to_string(), 0)].clone();
    let first_u = &r.u_by[&r.process[&("1001".to_string(), 1)]];
    let rows = got["rows"].as_array().unwrap();
    assert_eq!(
        rows.iter()
            .map(|row| row.as_array().unwrap()[..4].to_vec())
            .collect::<Vec<_>>(),
        [vec![
            Value::from("1002"),
            Value::from(user),
            Value::from(iri(&ana_process)),
            Value::from(iri(first_u)),
        ]],
        "one row: the analysis's job and user, and the first run's /fields/u, not the \
         re-run's\n{ctx}"
    );
}

/// `h5prov lineage ana.h5:/stats`: the chain, as text and JSON.
fn check_lineage(w: &Workflow, r: &Roles, ctx: &str) {
    let mut args = vec!["lineage", "ana.h5:/stats"];
    args.extend(w.jobs.iter().map(|j| j.to_str().unwrap()));
    let text = String::from_utf8(h5prov_ok(&args)).unwrap();
    let (up, down) = text.split_once("downstream").expect("both chains");
    let line = |s: &str, pat: &[&str]| {
        s.lines()
            .position(|l| pat.iter().all(|p| l.contains(p)))
            .unwrap_or_else(|| panic!("no line with {pat:?}:\n{text}\n{ctx}"))
    };
    // Upstream, in order: /stats, the analysis (job 1002), /fields/u inferred, the first
    // simulation's rank 1, the file version its rank 0 generated.
    let order = [
        line(up, &["ana.h5:/stats"]),
        line(up, &["generated by python", "job 1002"]),
        line(up, &["derived from (inferred)"]),
        line(up, &["sim.h5:/fields/u"]),
        line(up, &["generated by workflow", "rank 1", "job 1001"]),
        line(up, &["generated by workflow", "rank 0", "job 1001"]),
    ];
    assert!(
        order.windows(2).all(|w| w[0] < w[1]),
        "{order:?}:\n{text}\n{ctx}"
    );
    assert!(
        !up.contains("job 1004"),
        "the re-run is not upstream:\n{text}\n{ctx}"
    );
    line(down, &["used by workflow", "job 1003"]);

    args.push("--json");
    let json: Value = serde_json::from_slice(&h5prov_ok(&args)).unwrap();
    let l = json.as_array().unwrap();
    assert_eq!(l.len(), 1, "one version of /stats: {json:#}\n{ctx}");
    let up = &l[0]["upstream"];
    assert_eq!(
        format!("h5prov:{}", up["entity"].as_str().unwrap()),
        r.stats,
        "{ctx}"
    );
    let gen = &up["generated_by"][0];
    assert_eq!(gen["process"]["job"], "1002", "{ctx}");
    assert_eq!(gen["inferred"], true, "{ctx}");
    let first_u = &r.u_by[&r.process[&("1001".to_string(), 1)]];
    assert_eq!(
        format!("h5prov:{}", gen["from"][0]["entity"].as_str().unwrap()),
        *first_u,
        "{ctx}"
    );
    assert_eq!(
        l[0]["downstream"]["used_by"][0]["process"]["job"], "1003",
        "{ctx}"
    );

    // A target the traces do not hold is an error that names it.
    args.pop();
    args[1] = "ana.h5:/nope";
    let out = h5prov_cmd(&args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("/nope"),
        "{err}\n{ctx}"
    );
}

/// The same jobs as merged files, and as one Parquet export of the four jobs, give the same
/// PROV-JSON document as their trace directories.
fn check_other_inputs(w: &Workflow, doc: &Value, ctx: &str) {
    let pq = w.dir.join("parquet");
    let mut merged = Vec::new();
    for j in &w.jobs {
        let m = j.with_extension("h5prov");
        h5prov_ok(&["merge", s(j), "-o", s(&m)]);
        h5prov_ok(&["export", "--parquet", s(&pq), s(j)]);
        merged.push(m);
    }
    let from_merged = w.dir.join("merged.json");
    let mut args = vec!["export", "--prov", s(&from_merged)];
    args.extend(merged.iter().map(|m| s(m)));
    h5prov_ok(&args);
    let from_parquet = w.dir.join("parquet.json");
    h5prov_ok(&["export", "--prov", s(&from_parquet), s(&pq)]);
    for f in [from_merged, from_parquet] {
        let other: Value = serde_json::from_slice(&std::fs::read(&f).unwrap()).unwrap();
        assert!(
            other == *doc,
            "{} differs from the export of the trace directories\n{ctx}",
            f.display()
        );
    }
    // One job of the export.
    let one = w.dir.join("job-1002.json");
    h5prov_ok(&["export", "--prov", s(&one), "--job", "1002", s(&pq)]);
    let one: Value = serde_json::from_slice(&std::fs::read(&one).unwrap()).unwrap();
    assert_eq!(
        one["activity"].as_object().unwrap().len(),
        2,
        "its process and job\n{ctx}"
    );
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// `h5prov report --html` of the workflow's directory (every job): the dataflow graph,
/// program → dataset → program with the bytes on each edge, `sim.h5` one file whatever
/// path each program opened it by.
fn check_dataflow(w: &Workflow, ctx: &str) {
    let html = w.dir.join("report.html");
    h5prov_ok(&["report", s(&w.dir), "--html", s(&html)]);
    let html = std::fs::read_to_string(&html).unwrap();
    let start = html
        .find("<svg id=\"dataflow\"")
        .unwrap_or_else(|| panic!("no dataflow graph\n{ctx}"));
    let svg = &html[start..start + html[start..].find("</svg>").unwrap()];
    let sim = w.dir.join("sim.h5");
    let ana = w.dir.join("ana.h5");
    // Two processes in each of two jobs wrote 32 doubles of each field: 1 KiB; the
    // analysis read all of u (512 B) and wrote 3 doubles; the reader read them.
    for (who, verb, bytes, what) in [
        (
            "workflow",
            "wrote",
            "1.0 KiB",
            format!("{}:/fields/u", sim.display()),
        ),
        (
            "workflow",
            "wrote",
            "1.0 KiB",
            format!("{}:/fields/v", sim.display()),
        ),
        (
            "python3",
            "read",
            "512 B",
            format!("{}:/fields/u", sim.display()),
        ),
        (
            "python3",
            "wrote",
            "24 B",
            format!("{}:/stats", ana.display()),
        ),
        (
            "workflow",
            "read",
            "24 B",
            format!("{}:/stats", ana.display()),
        ),
    ] {
        let edge = svg.split("<title>").any(|t| {
            t.starts_with(who) && t.contains(&format!(" {verb} {bytes} of {what}</title>"))
        });
        assert!(
            edge,
            "no edge {who} {verb} {bytes} of {what}:\n{svg}\n{ctx}"
        );
    }
    assert_eq!(
        svg.matches("fill=\"#f5f5f5\"").count(),
        3,
        "three dataset nodes (sim.h5 by its two names is one file):\n{svg}\n{ctx}"
    );
}

fn workflow_lineage(tag: &str, options: &str) {
    let w = run_workflow(tag, options);
    let ctx = format!("options {options:?}, in {}", w.dir.display());
    let (doc, roles) = check_json(&w, &ctx);
    check_dataflow(&w, &ctx);
    check_other_inputs(&w, &doc, &ctx);
    check_turtle(&w, &doc, &roles, &ctx);
    check_lineage(&w, &roles, &ctx);
}

#[test]
fn workflow_lineage_at_level_summary() {
    workflow_lineage("summary", "level=summary");
}

#[test]
fn workflow_lineage_at_the_default_level() {
    workflow_lineage("default", "");
}

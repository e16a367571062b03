//! `h5prov export --prov` (issue 34, item 2): a two-job workflow on one file (a writer, a
//! reader, then the writer again, truncating it), traced at `level=summary`, exported as
//! W3C PROV-JSON that the reference `prov` package (PyPI) loads and converts to PROV-N.
//! The file has two versions: the one the reader used, invalidated by the re-run, and the
//! one the re-run generated.

use h5prov_tests::*;
use serde_json::Value;
use std::path::Path;
use std::process::Command;

fn job(dir: &Path, name: &str, mode: &str) -> std::path::PathBuf {
    let traces = dir.join(format!("traces-{name}"));
    Run::with_h5prov(
        &c_program("lineage"),
        &[mode, "sim.h5"],
        dir,
        &traces,
        "level=summary;format=bin",
    )
    .ok();
    traces
}

/// The ids of the entities whose `prov:type` is `t`.
fn entities_of_type<'a>(doc: &'a Value, t: &str) -> Vec<&'a str> {
    doc["entity"]
        .as_object()
        .unwrap()
        .iter()
        .filter(|(_, v)| v["prov:type"]["$"] == t)
        .map(|(k, _)| k.as_str())
        .collect()
}

/// `(subject, object)` of each relation of `section`, by the two keys given.
fn relations<'a>(doc: &'a Value, section: &str, a: &str, b: &str) -> Vec<(&'a str, &'a str)> {
    doc[section]
        .as_object()
        .map(|m| {
            m.values()
                .map(|v| (v[a].as_str().unwrap(), v[b].as_str().unwrap()))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn a_writer_reader_truncating_workflow_gives_two_file_versions_in_valid_prov_json() {
    let dir = scratch("prov-export");
    let write = job(&dir, "write", "create");
    let read = job(&dir, "read", "read");
    let rewrite = job(&dir, "rewrite", "create");
    let out = dir.join("prov.json");
    h5prov_ok(&[
        "export",
        "--prov",
        out.to_str().unwrap(),
        write.to_str().unwrap(),
        read.to_str().unwrap(),
        rewrite.to_str().unwrap(),
    ]);
    let doc: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();

    let mut versions = entities_of_type(&doc, "h5prov:FileVersion");
    versions.sort_unstable();
    assert_eq!(versions.len(), 2, "two versions of sim.h5: {versions:?}");
    assert_eq!(entities_of_type(&doc, "h5prov:File").len(), 1, "one path");
    let acts = doc["activity"].as_object().unwrap();
    assert_eq!(acts.len(), 3, "three processes");
    for a in acts.values() {
        let t = a["prov:startTime"].as_str().unwrap();
        assert!(t.ends_with('Z') && t.len() == 30, "UTC xsd:dateTime: {t}");
    }
    let cmd_of = |act: &str| acts[act]["h5prov:cmdline"].as_str().unwrap().to_string();
    let pid_dir = |act: &str| acts[act]["h5prov:pid"].as_u64().unwrap();
    let meta_pid = |traces: &Path| u64::from(read_metas(traces)[0].pid);

    // Which process did what, by pid.
    let generated = relations(&doc, "wasGeneratedBy", "prov:entity", "prov:activity");
    let file_gen: Vec<_> = generated
        .iter()
        .filter(|(e, _)| versions.contains(e))
        .map(|(e, a)| (*e, pid_dir(a)))
        .collect();
    let used = relations(&doc, "used", "prov:activity", "prov:entity");
    let invalidated = relations(&doc, "wasInvalidatedBy", "prov:entity", "prov:activity");
    let (w, r, rw) = (meta_pid(&write), meta_pid(&read), meta_pid(&rewrite));
    let v1 = file_gen
        .iter()
        .find(|(_, p)| *p == w)
        .expect("the writer generated")
        .0;
    let v2 = file_gen
        .iter()
        .find(|(_, p)| *p == rw)
        .expect("the re-run generated")
        .0;
    assert_ne!(v1, v2);
    assert!(
        used.iter().any(|(a, e)| pid_dir(a) == r && *e == v1),
        "the reader used the first version: {used:?}"
    );
    assert!(
        !used.iter().any(|(_, e)| *e == v2),
        "nobody used the second version: {used:?}"
    );
    assert_eq!(
        invalidated
            .iter()
            .map(|(e, a)| (*e, pid_dir(a)))
            .collect::<Vec<_>>(),
        [(v1, rw)],
        "the re-run invalidated the first version"
    );
    // Both versions are specializations of the path-named entity.
    let spec = relations(
        &doc,
        "specializationOf",
        "prov:specificEntity",
        "prov:generalEntity",
    );
    for v in [v1, v2] {
        assert_eq!(
            spec.iter().filter(|(s, _)| *s == v).count(),
            1,
            "{v} specialized once, however many processes saw it: {spec:?}"
        );
    }
    // The dataset of each version, a member of it.
    let members = relations(&doc, "hadMember", "prov:collection", "prov:entity");
    assert!(members.iter().any(|(c, _)| *c == v1) && members.iter().any(|(c, _)| *c == v2));
    assert!(cmd_of(acts.keys().next().unwrap()).contains("sim.h5"));

    // The reference implementation reads it and writes PROV-N.
    let script = "import sys\n\
        from prov.model import ProvDocument\n\
        doc = ProvDocument.deserialize(source=sys.argv[1], format='json')\n\
        print(doc.get_provn())\n";
    let py = Command::new(prov_python())
        .args(["-c", script])
        .arg(&out)
        .output()
        .unwrap();
    assert!(py.status.success(), "{}", describe_output("prov", &py));
    let provn = String::from_utf8(py.stdout).unwrap();
    for term in [
        "wasInvalidatedBy(",
        "wasGeneratedBy(",
        "used(",
        "specializationOf(",
        "hadMember(",
        "wasAssociatedWith(",
        "prov:Person",
        "prov:SoftwareAgent",
    ] {
        assert!(provn.contains(term), "PROV-N lacks {term}:\n{provn}");
    }
}

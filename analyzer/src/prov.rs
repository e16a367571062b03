//! `h5prov export --prov`: the lineage the objects files record (issue 34), as a W3C
//! PROV-JSON document. `docs/PROVENANCE.md` describes the namespace and every term.
//!
//! - Agents: each user (`prov:Person`) and each program (`prov:SoftwareAgent`).
//! - Activities: each process run, with its host, pid, rank, job and UTC start and end.
//! - Entities: file versions, identified by `(dev, ino)` and the version's size and mtime,
//!   each `prov:specializationOf` a version-free entity named by the file's path; the
//!   datasets of a version by token, `prov:hadMember` of it.
//! - Relations: `used` (the version a process found, for every open), `wasGeneratedBy`
//!   (the version a create or write left), `wasInvalidatedBy` (the version a truncating
//!   create destroyed), `wasAssociatedWith` (process → program, user), `wasAttributedTo`
//!   (generated version → user).
//!
//! Memory: one entry per process, file version and dataset, not per record (the objects
//! files have one row per object state node).

use crate::read::objects::{read_meta, read_objects};
use crate::read::{discover, Error, ReadOptions};
use h5prov_format::{ObjectSummary, ProcessMeta};
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The IRI of the `h5prov:` namespace.
pub const NAMESPACE: &str = "https://github.com/h5prov/h5prov/ns/prov#";

/// What the export found: for the summary line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProvStats {
    /// Processes (activities).
    pub processes: usize,
    /// File versions.
    pub file_versions: usize,
    /// Dataset entities.
    pub datasets: usize,
    /// File rows left out because they have no identity (`ino` 0: written before h5prov
    /// recorded it, or a file name `stat(2)` could not find).
    pub files_without_identity: usize,
}

/// One process: its meta and its objects rows.
struct Proc {
    meta: ProcessMeta,
    rows: Vec<ObjectSummary>,
}

/// The stem of an h5prov file name (`h5prov-r0-p12` of `h5prov-r0-p12.objects.bin.zst`).
fn stem(p: &Path) -> String {
    let name = p
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    for s in [".objects.", ".meta.json"] {
        if let Some(i) = name.find(s) {
            return name[..i].to_string();
        }
    }
    name.into_owned()
}

fn read_procs(inputs: &[PathBuf]) -> Result<Vec<Proc>, Error> {
    let mut procs = Vec::new();
    for root in inputs {
        let found = discover(root)?;
        let mut by_stem: BTreeMap<(PathBuf, String), Proc> = BTreeMap::new();
        for m in &found.metas {
            let meta = read_meta(&m.path)
                .map_err(|e| Error::Other(format!("{}: {e}", m.path.display())))?;
            let dir = m.path.parent().map(Path::to_path_buf).unwrap_or_default();
            by_stem.insert(
                (dir, stem(&m.path)),
                Proc {
                    meta,
                    rows: Vec::new(),
                },
            );
        }
        for (f, enc) in &found.objects {
            let dir = f.path.parent().map(Path::to_path_buf).unwrap_or_default();
            let Some(p) = by_stem.get_mut(&(dir, stem(&f.path))) else {
                return Err(Error::Other(format!(
                    "{}: no meta.json of the same process next to it",
                    f.path.display()
                )));
            };
            read_objects(&f.path, *enc, &ReadOptions::default(), |o| {
                if o.kind == "file" || o.kind == "dataset" {
                    p.rows.push(o.clone());
                }
            })?;
        }
        procs.extend(by_stem.into_values());
    }
    Ok(procs)
}

/// `ns` since the epoch as an `xsd:dateTime` in UTC (`2026-11-28T08:00:00.123456789Z`).
pub fn utc_datetime(ns: u64) -> String {
    let secs = ns / 1_000_000_000;
    let (days, rem) = ((secs / 86_400) as i64, secs % 86_400);
    // Civil date from days since 1970-01-01 (H. Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:09}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60,
        ns % 1_000_000_000
    )
}

fn datetime(ns: u64) -> Value {
    json!({"$": utc_datetime(ns), "type": "xsd:dateTime"})
}

/// An identifier's local part: characters other than letters, digits, `-`, `_` and `.`
/// as `%XX`, so that paths make valid qualified names.
fn local(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The id of a file version: `(dev, ino)` and the version's size and mtime.
fn version_id(dev: u64, ino: u64, size: u64, mtime_ns: u64) -> String {
    format!("h5prov:file-{dev}-{ino}-v{mtime_ns}-{size}")
}

/// A relation table of the document: one entry per id.
#[derive(Default)]
struct Doc {
    sections: BTreeMap<&'static str, Map<String, Value>>,
    counter: BTreeMap<&'static str, usize>,
    /// The relations made, so that one that several processes state is written once.
    seen: std::collections::HashSet<(&'static str, String)>,
}

impl Doc {
    fn put(&mut self, section: &'static str, id: String, v: Value) {
        self.sections
            .entry(section)
            .or_default()
            .entry(id)
            .or_insert(v);
    }
    /// A relation with a blank id of its own (`_:used3`), unless the same one was made.
    fn relation(&mut self, section: &'static str, v: Value) {
        if !self.seen.insert((section, v.to_string())) {
            return;
        }
        let n = self.counter.entry(section).or_default();
        *n += 1;
        let id = format!("_:{section}{n}");
        self.put(section, id, v);
    }
}

/// Builds the PROV-JSON document of `inputs` (trace directories, merged files).
pub fn prov_json(inputs: &[PathBuf]) -> Result<(Value, ProvStats), Error> {
    let procs = read_procs(inputs)?;
    let mut doc = Doc::default();
    let mut stats = ProvStats {
        processes: procs.len(),
        ..ProvStats::default()
    };
    for p in &procs {
        let m = &p.meta;
        let act = format!("h5prov:process-{}-{}-{}", local(&m.host), m.pid, m.start_ns);
        let user = format!("h5prov:user-{}-{}", local(&m.host), m.uid);
        let program = format!("h5prov:program-{}", local(&m.exe));
        doc.put(
            "agent",
            user.clone(),
            json!({"prov:type": {"$": "prov:Person", "type": "prov:QUALIFIED_NAME"},
                   "h5prov:user": m.user, "h5prov:uid": m.uid}),
        );
        doc.put(
            "agent",
            program.clone(),
            json!({"prov:type": {"$": "prov:SoftwareAgent", "type": "prov:QUALIFIED_NAME"},
                   "h5prov:exe": m.exe}),
        );
        let mut a = json!({
            "prov:startTime": utc_datetime(m.start_ns),
            "prov:type": {"$": "h5prov:Process", "type": "prov:QUALIFIED_NAME"},
            "h5prov:host": m.host,
            "h5prov:pid": m.pid,
            "h5prov:rank": m.rank,
            "h5prov:cmdline": m.cmdline.join(" "),
            "h5prov:hdf5Version": m.hdf5_version,
        });
        if let Some(end) = m.end_ns {
            a["prov:endTime"] = Value::from(utc_datetime(end));
        }
        if !m.job_id.is_empty() {
            a["h5prov:job"] = Value::from(m.job_id.clone());
        }
        doc.put("activity", act.clone(), a);
        doc.relation(
            "wasAssociatedWith",
            json!({"prov:activity": act, "prov:agent": program}),
        );
        doc.relation(
            "wasAssociatedWith",
            json!({"prov:activity": act, "prov:agent": user}),
        );
        // The file versions this process found and left, by file name (the key its
        // dataset rows share).
        let mut files: BTreeMap<&str, (Option<String>, Option<String>)> = BTreeMap::new();
        stats.files_without_identity += p
            .rows
            .iter()
            .filter(|o| o.kind == "file" && o.ino == 0)
            .count();
        for f in p.rows.iter().filter(|o| o.kind == "file" && o.ino != 0) {
            let path = format!("h5prov:path-{}", local(&f.file));
            doc.put(
                "entity",
                path.clone(),
                json!({"prov:type": {"$": "h5prov:File", "type": "prov:QUALIFIED_NAME"},
                       "h5prov:path": f.file}),
            );
            let version = |id: &str, size: u64, mtime: u64, doc: &mut Doc| {
                doc.put(
                    "entity",
                    id.to_string(),
                    json!({"prov:type": {"$": "h5prov:FileVersion", "type": "prov:QUALIFIED_NAME"},
                           "h5prov:dev": f.dev, "h5prov:ino": f.ino,
                           "h5prov:size": size, "h5prov:mtime": datetime(mtime)}),
                );
                doc.relation(
                    "specializationOf",
                    json!({"prov:specificEntity": id, "prov:generalEntity": path}),
                );
            };
            let found = (f.intent != "create")
                .then(|| version_id(f.dev, f.ino, f.open_size, f.open_mtime_ns));
            let left = (f.close_mtime_ns != 0)
                .then(|| version_id(f.dev, f.ino, f.close_size, f.close_mtime_ns));
            if let Some(v) = &found {
                version(v, f.open_size, f.open_mtime_ns, &mut doc);
                if f.intent == "truncate" {
                    doc.relation(
                        "wasInvalidatedBy",
                        json!({"prov:entity": v, "prov:activity": act}),
                    );
                } else {
                    doc.relation("used", json!({"prov:activity": act, "prov:entity": v}));
                }
            }
            if let Some(v) = &left {
                if left != found {
                    version(v, f.close_size, f.close_mtime_ns, &mut doc);
                    doc.relation(
                        "wasGeneratedBy",
                        json!({"prov:entity": v, "prov:activity": act}),
                    );
                    doc.relation(
                        "wasAttributedTo",
                        json!({"prov:entity": v, "prov:agent": user}),
                    );
                }
            }
            let read_from = if f.intent == "truncate" { None } else { found };
            files.insert(&f.file, (read_from, left));
        }
        for d in p.rows.iter().filter(|o| o.kind == "dataset") {
            let Some((found, left)) = files.get(d.file.as_str()) else {
                continue;
            };
            // The object's address in the file: the token less the process's file number.
            let token = d.token.split_once(':').map_or(d.token.as_str(), |(_, t)| t);
            let member = |v: &str, doc: &mut Doc| {
                let id = format!("{v}-obj-{}", local(token));
                doc.put(
                    "entity",
                    id.clone(),
                    json!({"prov:type": {"$": "h5prov:Dataset", "type": "prov:QUALIFIED_NAME"},
                           "h5prov:path": d.path, "h5prov:token": token}),
                );
                doc.relation(
                    "hadMember",
                    json!({"prov:collection": v, "prov:entity": id}),
                );
                id
            };
            if let (Some(v), true) = (found, d.reads > 0) {
                let id = member(v, &mut doc);
                doc.relation("used", json!({"prov:activity": act, "prov:entity": id}));
            }
            if let (Some(v), true) = (left, d.writes > 0 || d.created != 0) {
                let id = member(v, &mut doc);
                doc.relation(
                    "wasGeneratedBy",
                    json!({"prov:entity": id, "prov:activity": act}),
                );
            }
        }
    }
    let entities = doc.sections.get("entity");
    let count = |t: &str| {
        entities.map_or(0, |e| {
            e.values().filter(|v| v["prov:type"]["$"] == t).count()
        })
    };
    stats.file_versions = count("h5prov:FileVersion");
    stats.datasets = count("h5prov:Dataset");
    let mut out = Map::new();
    out.insert(
        "prefix".into(),
        json!({"h5prov": NAMESPACE, "xsd": "http://www.w3.org/2001/XMLSchema#"}),
    );
    for (k, v) in doc.sections {
        out.insert(k.into(), Value::Object(v));
    }
    Ok((Value::Object(out), stats))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_datetimes() {
        assert_eq!(utc_datetime(0), "1970-01-01T00:00:00.000000000Z");
        // 2024-02-29T12:34:56.5Z, a leap day.
        assert_eq!(
            utc_datetime(1_709_210_096_500_000_000),
            "2024-02-29T12:34:56.500000000Z"
        );
    }

    #[test]
    fn local_names_escape() {
        assert_eq!(local("a/b c.h5"), "a%2Fb%20c.h5");
    }
}

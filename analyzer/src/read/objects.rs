//! Objects files (one summary row per object state node) and `meta.json` files.

use super::csv_trace::drive_csv;
use super::jsonl_trace::drive_jsonl;
use super::{input, parse_i64, parse_u64, Error, FileDiag, ReadOptions};
use h5prov_format::{Encoding, ObjectSummary, ProcessMeta, OBJECT_COLUMNS};
use std::path::Path;

fn num(col: &str, v: &str) -> Result<u64, String> {
    parse_u64(v.as_bytes()).ok_or_else(|| format!("column `{col}`: not a valid number: {v:?}"))
}

/// The columns [`set_field`] knows, in its order: the format's objects columns.
const FIELDS: &[&str] = OBJECT_COLUMNS;

/// The index of a column name in [`FIELDS`]; `None` for columns this version ignores.
fn field_index(name: &str) -> Option<usize> {
    FIELDS.iter().position(|f| *f == name)
}

/// Sets field `FIELDS[i]` of a summary from its text. The header is matched to indices
/// once per file: matching 28 names per field of every row cost more than parsing.
fn set_field(o: &mut ObjectSummary, i: usize, v: &str) -> Result<(), String> {
    let col = FIELDS[i];
    let n = |v: &str| num(col, v);
    match i {
        0 => {
            o.rank = parse_i64(v.as_bytes(), -1)
                .ok_or_else(|| format!("column `rank`: not a valid number: {v:?}"))?
        }
        1 => o.pid = u32::try_from(n(v)?).map_err(|e| format!("column `pid`: {e}"))?,
        2 => o.kind = v.to_string(),
        3 => o.file = v.to_string(),
        4 => o.path = v.to_string(),
        5 => o.token = v.to_string(),
        6 => o.opens = n(v)?,
        7 => o.accesses = n(v)?,
        8 => o.reads = n(v)?,
        9 => o.writes = n(v)?,
        10 => o.bytes_read = n(v)?,
        11 => o.bytes_written = n(v)?,
        12 => o.read_ns = n(v)?,
        13 => o.write_ns = n(v)?,
        14 => o.first_ns = n(v)?,
        15 => o.last_ns = n(v)?,
        16 => o.dims = v.to_string(),
        17 => o.type_size = n(v)?,
        18 => o.layout = v.to_string(),
        19 => o.ind_io = n(v)?,
        20 => o.coll_io = n(v)?,
        21 => o.broken_coll_io = n(v)?,
        22 => o.created = u8::try_from(n(v)?).map_err(|e| format!("column `created`: {e}"))?,
        23 => o.dsets_created = n(v)?,
        24 => o.dsets_opened = n(v)?,
        25 => o.groups_created = n(v)?,
        26 => o.groups_opened = n(v)?,
        27 => o.open_ns = n(v)?,
        _ => {}
    }
    Ok(())
}

/// Reads every summary row of an objects file.
pub fn read_objects(
    path: &Path,
    enc: Encoding,
    opts: &ReadOptions,
    mut sink: impl FnMut(ObjectSummary),
) -> Result<FileDiag, Error> {
    match enc {
        Encoding::Csv => drive_csv(
            path,
            opts,
            |h| {
                let names: Vec<String> = h
                    .iter()
                    .map(|b| String::from_utf8_lossy(b).into_owned())
                    .collect();
                if !names.iter().any(|n| n == "kind") || !names.iter().any(|n| n == "path") {
                    return Err(format!(
                        "header is not an h5prov objects header (expected {})",
                        OBJECT_COLUMNS.join(",")
                    ));
                }
                Ok(names
                    .into_iter()
                    .map(|n| (field_index(&n), n))
                    .collect::<Vec<_>>())
            },
            |names, r| {
                if r.len() != names.len() {
                    return Err(format!(
                        "{} fields, the header has {}",
                        r.len(),
                        names.len()
                    ));
                }
                let mut o = ObjectSummary {
                    rank: -1,
                    ..Default::default()
                };
                for ((idx, name), v) in names.iter().zip(r.iter()) {
                    let Some(i) = *idx else { continue };
                    let v = std::str::from_utf8(v)
                        .map_err(|_| format!("column `{name}`: not valid UTF-8"))?;
                    set_field(&mut o, i, v)?;
                }
                sink(o);
                Ok(())
            },
        ),
        _ => drive_jsonl(path, opts, |body| {
            let v: serde_json::Value = serde_json::from_slice(body).map_err(|e| e.to_string())?;
            let obj = v.as_object().ok_or("not a JSON object")?;
            let mut o = ObjectSummary {
                rank: -1,
                ..Default::default()
            };
            for (k, v) in obj {
                let text = match v {
                    serde_json::Value::String(s) => s.clone(),
                    serde_json::Value::Null => String::new(),
                    serde_json::Value::Bool(b) => u8::from(*b).to_string(),
                    other => other.to_string(),
                };
                if let Some(i) = field_index(k) {
                    set_field(&mut o, i, &text)?;
                }
            }
            sink(o);
            Ok(())
        }),
    }
}

/// Reads a `meta.json`. Missing keys keep their defaults (`rank`/`world_size` −1,
/// `end_ns` null), so a meta file from an unfinished process still reads. The error does
/// not repeat the path.
pub fn read_meta(path: &Path) -> Result<ProcessMeta, String> {
    let bytes = input::read_all(path).map_err(|e| match e {
        Error::Io { source, .. } => source.to_string(),
        other => other.to_string(),
    })?;
    let v: serde_json::Value = serde_json::from_slice(&bytes).map_err(|e| e.to_string())?;
    let o = v.as_object().ok_or("not a JSON object")?;
    let u = |k: &str| o.get(k).and_then(|v| v.as_u64()).unwrap_or(0);
    let i = |k: &str| o.get(k).and_then(|v| v.as_i64()).unwrap_or(-1);
    let s = |k: &str| o.get(k).and_then(|v| v.as_str()).unwrap_or("").to_string();
    let b = |k: &str| o.get(k).and_then(|v| v.as_bool()).unwrap_or(false);
    Ok(ProcessMeta {
        format_version: u("format_version") as u32,
        uid: u("uid") as u32,
        user: s("user"),
        host: s("host"),
        pid: u("pid") as u32,
        rank: i("rank"),
        world_size: i("world_size"),
        exe: s("exe"),
        cmdline: o
            .get("cmdline")
            .and_then(|v| v.as_array())
            .map(|a| {
                a.iter()
                    .filter_map(|x| x.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default(),
        hdf5_version: s("hdf5_version"),
        connector: s("connector"),
        level: s("level"),
        format: s("format"),
        anchor_wall_ns: u("anchor_wall_ns"),
        anchor_mono_ns: u("anchor_mono_ns"),
        start_ns: u("start_ns"),
        end_ns: o.get("end_ns").and_then(|v| v.as_u64()),
        records: u("records"),
        bytes_written: u("bytes_written"),
        self_ns: u("self_ns"),
        dropped: u("dropped"),
        write_errors: u("write_errors"),
        coll_metadata_reads: b("coll_metadata_reads"),
        coll_metadata_writes: b("coll_metadata_writes"),
    })
}

//! Objects files (one summary row per object state node) and `meta.json` files.

use super::csv_trace::drive_csv;
use super::jsonl_trace::drive_jsonl;
use super::{input, parse_i64, parse_u64, Error, FileDiag, ReadOptions};
use h5prov_format::{Encoding, ObjectSummary, ProcessMeta, OBJECT_COLUMNS};
use std::path::Path;

#[inline(always)]
fn num(col: &str, v: &[u8]) -> Result<u64, String> {
    parse_u64(v).ok_or_else(|| {
        format!(
            "column `{col}`: not a valid number: {:?}",
            String::from_utf8_lossy(v)
        )
    })
}

/// Replaces a string field's text without allocating once the string has grown (the
/// reader reuses one summary for every row). Rows mostly repeat the previous row's file,
/// kind and layout: equal bytes are neither checked nor copied again.
#[inline]
fn set_text(dst: &mut String, col: &str, v: &[u8]) -> Result<(), String> {
    if dst.as_bytes() == v {
        return Ok(());
    }
    let v = std::str::from_utf8(v).map_err(|_| format!("column `{col}`: not valid UTF-8"))?;
    dst.clear();
    dst.push_str(v);
    Ok(())
}

/// The columns [`set_field`] knows, in its order: the format's objects columns.
const FIELDS: &[&str] = OBJECT_COLUMNS;

/// The index of a column name in [`FIELDS`]; `None` for columns this version ignores.
fn field_index(name: &str) -> Option<usize> {
    FIELDS.iter().position(|f| *f == name)
}

/// Sets field `FIELDS[i]` of a summary from its text. The header is matched to indices
/// once per file: matching 28 names per field of every row cost more than parsing. Only
/// the text columns are checked for UTF-8; a number's digits are checked as digits.
/// Inlined so that the loop over a standard header resolves the `match` per column.
#[inline(always)]
fn set_field(o: &mut ObjectSummary, i: usize, v: &[u8]) -> Result<(), String> {
    let col = FIELDS[i];
    let n = |v: &[u8]| num(col, v);
    match i {
        0 => {
            o.rank = parse_i64(v, -1).ok_or_else(|| {
                format!(
                    "column `rank`: not a valid number: {:?}",
                    String::from_utf8_lossy(v)
                )
            })?
        }
        1 => o.pid = u32::try_from(n(v)?).map_err(|e| format!("column `pid`: {e}"))?,
        2 => set_text(&mut o.kind, col, v)?,
        3 => set_text(&mut o.file, col, v)?,
        4 => set_text(&mut o.path, col, v)?,
        5 => set_text(&mut o.token, col, v)?,
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
        16 => set_text(&mut o.dims, col, v)?,
        17 => o.type_size = n(v)?,
        18 => set_text(&mut o.layout, col, v)?,
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

/// A summary with every field at its "not in the row" value (`rank` −1).
fn blank() -> ObjectSummary {
    ObjectSummary {
        rank: -1,
        ..Default::default()
    }
}

/// Reads every summary row of an objects file. The sink borrows one summary that the
/// reader refills for each row (no allocation per row); clone it to keep it.
pub fn read_objects(
    path: &Path,
    enc: Encoding,
    opts: &ReadOptions,
    mut sink: impl FnMut(&ObjectSummary),
) -> Result<FileDiag, Error> {
    let mut o = blank();
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
                // The header h5prov writes: columns in `FIELDS` order.
                let standard = names.iter().map(String::as_str).eq(FIELDS.iter().copied());
                let names: Vec<_> = names.into_iter().map(|n| (field_index(&n), n)).collect();
                Ok((names, standard))
            },
            |(names, standard), r| {
                if r.len() != names.len() {
                    return Err(format!(
                        "{} fields, the header has {}",
                        r.len(),
                        names.len()
                    ));
                }
                // Every row has every column of the header, so each row sets the same
                // fields and the others keep their blank values: no reset needed.
                if *standard {
                    for (i, v) in r.iter().enumerate().take(FIELDS.len()) {
                        set_field(&mut o, i, v)?;
                    }
                } else {
                    for ((idx, _), v) in names.iter().zip(r.iter()) {
                        if let Some(i) = *idx {
                            set_field(&mut o, i, v)?;
                        }
                    }
                }
                sink(&o);
                Ok(())
            },
        ),
        _ => drive_jsonl(path, opts, |_, body| {
            let v: serde_json::Value = serde_json::from_slice(body).map_err(|e| e.to_string())?;
            let obj = v.as_object().ok_or("not a JSON object")?;
            // JSON rows may name different keys: start each from blank.
            o = blank();
            for (k, v) in obj {
                let text = match v {
                    serde_json::Value::String(s) => s.clone(),
                    serde_json::Value::Null => String::new(),
                    serde_json::Value::Bool(b) => u8::from(*b).to_string(),
                    other => other.to_string(),
                };
                if let Some(i) = field_index(k) {
                    set_field(&mut o, i, text.as_bytes())?;
                }
            }
            sink(&o);
            Ok(())
        }),
    }
}

/// Why a `meta.json` could not be used.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum MetaError {
    /// Not readable, not JSON, or not a JSON object.
    Unreadable(String),
    /// JSON, but keys hold values of the wrong type (`"pid": "abc"`, a negative
    /// `records`, a `uid` beyond `u32`): which keys, what they hold and what was expected.
    WrongType(String),
}

impl std::fmt::Display for MetaError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MetaError::Unreadable(s) | MetaError::WrongType(s) => f.write_str(s),
        }
    }
}

/// Reads a `meta.json`. Missing keys keep their defaults (`rank`/`world_size` −1,
/// `end_ns` null), so a meta file from an unfinished process still reads. The error does
/// not repeat the path. A key of the wrong type is an error (see [`read_meta_checked`]).
pub fn read_meta(path: &Path) -> Result<ProcessMeta, String> {
    read_meta_checked(path).map_err(|e| e.to_string())
}

/// A short rendering of a JSON value for messages.
fn show(v: &serde_json::Value) -> String {
    let s = v.to_string();
    match s.char_indices().nth(40) {
        Some((i, _)) => format!("{}...", &s[..i]),
        None => s,
    }
}

/// The keys of a meta object, read with their types checked: a present key of the wrong
/// type is noted (and reads as its default) instead of silently becoming 0 or "".
struct Keys<'a> {
    o: &'a serde_json::Map<String, serde_json::Value>,
    wrong: Vec<String>,
}

impl Keys<'_> {
    fn get<T>(
        &mut self,
        k: &str,
        default: T,
        what: &str,
        conv: impl FnOnce(&serde_json::Value) -> Option<T>,
    ) -> T {
        match self.o.get(k) {
            None => default,
            Some(v) => conv(v).unwrap_or_else(|| {
                self.wrong
                    .push(format!("key `{k}`: expected {what}, found {}", show(v)));
                default
            }),
        }
    }

    fn u64(&mut self, k: &str) -> u64 {
        self.get(k, 0, "an unsigned integer", |v| v.as_u64())
    }

    fn u32(&mut self, k: &str) -> u32 {
        self.get(k, 0, "an unsigned 32-bit integer", |v| {
            v.as_u64().and_then(|x| u32::try_from(x).ok())
        })
    }

    fn i64(&mut self, k: &str) -> i64 {
        self.get(k, -1, "an integer", |v| v.as_i64())
    }

    fn str(&mut self, k: &str) -> String {
        self.get(k, String::new(), "a string", |v| {
            v.as_str().map(str::to_string)
        })
    }

    fn bool(&mut self, k: &str) -> bool {
        self.get(k, false, "true or false", |v| v.as_bool())
    }
}

/// [`read_meta`], telling an unreadable file from one whose keys have the wrong types.
pub fn read_meta_checked(path: &Path) -> Result<ProcessMeta, MetaError> {
    let bytes = input::read_all(path).map_err(|e| {
        MetaError::Unreadable(match e {
            Error::Io { source, .. } => source.to_string(),
            other => other.to_string(),
        })
    })?;
    let v: serde_json::Value =
        serde_json::from_slice(&bytes).map_err(|e| MetaError::Unreadable(e.to_string()))?;
    let o = v
        .as_object()
        .ok_or_else(|| MetaError::Unreadable("not a JSON object".into()))?;
    let mut k = Keys {
        o,
        wrong: Vec::new(),
    };
    let meta = ProcessMeta {
        format_version: k.u32("format_version"),
        uid: k.u32("uid"),
        user: k.str("user"),
        host: k.str("host"),
        pid: k.u32("pid"),
        rank: k.i64("rank"),
        world_size: k.i64("world_size"),
        exe: k.str("exe"),
        cmdline: k.get("cmdline", Vec::new(), "an array of strings", |v| {
            v.as_array()?
                .iter()
                .map(|x| x.as_str().map(str::to_string))
                .collect()
        }),
        hdf5_version: k.str("hdf5_version"),
        hdf5_library: k.str("hdf5_library"),
        connector: k.str("connector"),
        level: k.str("level"),
        format: k.str("format"),
        anchor_wall_ns: k.u64("anchor_wall_ns"),
        anchor_mono_ns: k.u64("anchor_mono_ns"),
        start_ns: k.u64("start_ns"),
        // null: the process did not finish.
        end_ns: k.get("end_ns", None, "an unsigned integer or null", |v| {
            if v.is_null() {
                Some(None)
            } else {
                v.as_u64().map(Some)
            }
        }),
        records: k.u64("records"),
        bytes_written: k.u64("bytes_written"),
        self_ns: k.u64("self_ns"),
        dropped: k.u64("dropped"),
        write_errors: k.u64("write_errors"),
        coll_metadata_reads: k.bool("coll_metadata_reads"),
        coll_metadata_writes: k.bool("coll_metadata_writes"),
    };
    if k.wrong.is_empty() {
        Ok(meta)
    } else {
        Err(MetaError::WrongType(k.wrong.join("; ")))
    }
}

//! Objects files (one summary row per object state node) and `meta.json` files.

use super::bin_trace::drive_bin;
use super::csv_records::Fields;
use super::csv_trace::drive_csv;
use super::jsonl_trace::drive_jsonl;
use super::{input, Error, FileDiag, ReadOptions};
use h5prov_format::{Encoding, ObjectSummaryJson, ObjectSummaryRef, ProcessMeta};
use std::path::Path;

/// Reads every summary row of an objects file with the record table's parser (columns by
/// name in CSV and binary files). The sink borrows each row in place, its texts in the
/// reader's buffer (no copy, no allocation per row); `to_owned_record` keeps one.
pub fn read_objects(
    path: &Path,
    enc: Encoding,
    opts: &ReadOptions,
    mut sink: impl FnMut(&ObjectSummaryRef<'_>),
) -> Result<FileDiag, Error> {
    match enc {
        Encoding::Csv => drive_csv(
            path,
            opts,
            |h| ObjectSummaryRef::csv_header(h.iter()),
            |header, r| {
                sink(&ObjectSummaryRef::from_csv(header, &Fields::new(*r))?);
                Ok(())
            },
        ),
        Encoding::Bin => drive_bin(
            path,
            opts,
            |h| Ok(((), ObjectSummaryRef::bin_decoder(h)?)),
            |_, header, _, vals| {
                sink(&ObjectSummaryRef::from_bin(header, vals)?);
                Ok(())
            },
        ),
        _ => drive_jsonl(path, opts, |_, body| {
            // Missing keys read as "not known" (rank -1).
            let j: ObjectSummaryJson<'_> =
                serde_json::from_slice(body).map_err(|e| e.to_string())?;
            sink(&j.record()?);
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

    /// An unsigned integer that may be absent or null.
    fn opt_u64(&mut self, k: &str) -> Option<u64> {
        self.get(k, None, "an unsigned integer or null", |v| {
            if v.is_null() {
                Some(None)
            } else {
                v.as_u64().map(Some)
            }
        })
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

/// The longest `meta.json` read: far longer than any the connector writes (a few KiB).
pub const MAX_META: u64 = 16 << 20;

/// [`read_meta`], telling an unreadable file from one whose keys have the wrong types.
pub fn read_meta_checked(path: &Path) -> Result<ProcessMeta, MetaError> {
    // Bounded: a huge file named like a meta is not loaded.
    let bytes = input::read_all_max(path, MAX_META, "meta.json").map_err(|e| {
        MetaError::Unreadable(match e {
            Error::Io { source, .. } => source.to_string(),
            other => other.to_string(),
        })
    })?;
    let v: serde_json::Value =
        serde_json::from_slice(&bytes).map_err(|e| MetaError::Unreadable(e.to_string()))?;
    meta_from_json(&v)
}

/// A `meta.json` document as a [`ProcessMeta`], with the checks of [`read_meta_checked`]
/// (also how a Parquet export's `processes` rows are read back).
pub fn meta_from_json(v: &serde_json::Value) -> Result<ProcessMeta, MetaError> {
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
        job_id: k.str("job_id"),
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
        stream_sent: k.opt_u64("stream_sent"),
        stream_dropped: k.opt_u64("stream_dropped"),
    };
    if k.wrong.is_empty() {
        Ok(meta)
    } else {
        Err(MetaError::WrongType(k.wrong.join("; ")))
    }
}

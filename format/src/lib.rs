//! The h5prov trace format, version 1: the contract between the connector that writes traces
//! and the analyzer that reads them. `docs/TRACE-FORMAT.md` explains every field.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

use serde::{Deserialize, Serialize};
use std::path::Path;

/// Version written in every `meta.json` as `format_version`.
pub const FORMAT_VERSION: u32 = 1;

/// Column names of a trace file, in CSV order (also the JSONL keys).
pub const TRACE_COLUMNS: &[&str] = &[
    "seq",
    "start_ns",
    "total_ns",
    "under_ns",
    "rank",
    "pid",
    "tid",
    "op",
    "kind",
    "file",
    "path",
    "status",
    "async",
    "bytes",
    "type_size",
    "ndims",
    "npoints",
    "sel",
    "xfer",
    "xfer_actual",
    "batch",
    "detail",
];

/// One traced VOL callback (or one dataset of a multi-dataset read/write).
#[derive(Serialize, Deserialize, Debug, Clone, Default, PartialEq, Eq)]
pub struct TraceRecord {
    /// Per-process sequence number, strictly increasing.
    pub seq: u64,
    /// Start of the callback, ns since the Unix epoch.
    pub start_ns: u64,
    /// Duration of the whole callback, ns.
    pub total_ns: u64,
    /// Time inside the under connector, ns.
    pub under_ns: u64,
    /// MPI rank from the launcher environment, -1 when unknown.
    pub rank: i64,
    /// Process id.
    pub pid: u32,
    /// Kernel thread id.
    pub tid: u64,
    /// Operation, `class.callback[:sub]`.
    pub op: String,
    /// Object kind (`file`, `group`, `dataset`, ...), may be empty.
    pub kind: String,
    /// Container file name, may be empty.
    pub file: String,
    /// Object path within the file, may be empty.
    pub path: String,
    /// HDF5 status of the callback: 0 success, -1 failure.
    pub status: i32,
    /// 1 when the call carried an async request.
    #[serde(rename = "async")]
    pub is_async: u8,
    /// Data bytes moved.
    pub bytes: u64,
    /// Memory datatype size for data I/O.
    pub type_size: u64,
    /// Rank of the file dataspace for data I/O.
    pub ndims: u32,
    /// Selected elements for data I/O.
    pub npoints: u64,
    /// Selection kind: `all`, `none`, `points`, `hyperslab`, `irregular`, or empty.
    pub sel: String,
    /// Requested MPI-IO transfer mode, or empty.
    pub xfer: String,
    /// MPI-IO transfer mode actually used, or empty.
    pub xfer_actual: String,
    /// Datasets in a multi-dataset call, 1 otherwise.
    pub batch: u32,
    /// Selection detail at `level=element`, else empty.
    pub detail: String,
}

/// Column names of an objects file, in CSV order (also the JSONL keys).
pub const OBJECT_COLUMNS: &[&str] = &[
    "rank",
    "pid",
    "kind",
    "file",
    "path",
    "token",
    "opens",
    "accesses",
    "reads",
    "writes",
    "bytes_read",
    "bytes_written",
    "read_ns",
    "write_ns",
    "first_ns",
    "last_ns",
    "dims",
    "type_size",
    "layout",
    "ind_io",
    "coll_io",
    "broken_coll_io",
    "created",
    "dsets_created",
    "dsets_opened",
    "groups_created",
    "groups_opened",
    "open_ns",
];

/// Summary of one object state node, written when its last reference goes.
#[derive(Serialize, Deserialize, Debug, Clone, Default, PartialEq, Eq)]
pub struct ObjectSummary {
    /// MPI rank, -1 when unknown.
    pub rank: i64,
    /// Process id.
    pub pid: u32,
    /// `file`, `group`, `dataset`, `attr` or `datatype`.
    pub kind: String,
    /// Container file name.
    pub file: String,
    /// Object path (the first one it was opened through).
    pub path: String,
    /// `fileno:token` in hex, empty for files.
    pub token: String,
    /// Create/open calls that returned this object.
    pub opens: u64,
    /// Traced callbacks on this object.
    pub accesses: u64,
    /// Data read calls.
    pub reads: u64,
    /// Data write calls.
    pub writes: u64,
    /// Data bytes read.
    pub bytes_read: u64,
    /// Data bytes written.
    pub bytes_written: u64,
    /// Time in read callbacks, ns.
    pub read_ns: u64,
    /// Time in write callbacks, ns.
    pub write_ns: u64,
    /// First access, ns since the epoch.
    pub first_ns: u64,
    /// Last access, ns since the epoch.
    pub last_ns: u64,
    /// Dataset dimensions such as `10x20`, else empty.
    pub dims: String,
    /// Dataset element size, else 0.
    pub type_size: u64,
    /// Dataset layout, else empty.
    pub layout: String,
    /// Independent data transfers.
    pub ind_io: u64,
    /// Collective data transfers.
    pub coll_io: u64,
    /// Transfers requested collective but not done collectively.
    pub broken_coll_io: u64,
    /// 1 when this process created the object.
    pub created: u8,
    /// For files: datasets created in it.
    pub dsets_created: u64,
    /// For files: datasets opened in it.
    pub dsets_opened: u64,
    /// For files: groups created in it.
    pub groups_created: u64,
    /// For files: groups opened in it.
    pub groups_opened: u64,
    /// For files: first open to last close, ns.
    pub open_ns: u64,
}

/// The per-process metadata record (`<stem>.meta.json`).
#[derive(Serialize, Deserialize, Debug, Clone, Default, PartialEq, Eq)]
pub struct ProcessMeta {
    /// [`FORMAT_VERSION`] of the writer.
    pub format_version: u32,
    /// Numeric user id.
    pub uid: u32,
    /// User name, may be empty.
    pub user: String,
    /// Host name.
    pub host: String,
    /// Process id.
    pub pid: u32,
    /// MPI rank, -1 when unknown.
    pub rank: i64,
    /// MPI world size, -1 when unknown.
    pub world_size: i64,
    /// Executable path.
    pub exe: String,
    /// Command line.
    pub cmdline: Vec<String>,
    /// HDF5 library version, `major.minor.release`: that of the HDF5 library h5prov bound
    /// to (the one that loaded it), e.g. the copy inside an h5py wheel.
    pub hdf5_version: String,
    /// Path of that HDF5 library (empty in traces written before h5prov recorded it).
    #[serde(default)]
    pub hdf5_library: String,
    /// The connector info string h5prov was configured with.
    pub connector: String,
    /// Trace level name.
    pub level: String,
    /// Trace format name (`csv` or `jsonl`).
    pub format: String,
    /// Wall clock at the anchor, ns since the epoch.
    pub anchor_wall_ns: u64,
    /// `CLOCK_MONOTONIC` at the anchor, ns.
    pub anchor_mono_ns: u64,
    /// Process trace start, ns since the epoch.
    pub start_ns: u64,
    /// Process trace end, `None` when the process did not finish.
    pub end_ns: Option<u64>,
    /// Trace records written.
    pub records: u64,
    /// Trace bytes written.
    pub bytes_written: u64,
    /// h5prov's own recording time, ns.
    pub self_ns: u64,
    /// Records lost (buffer or I/O trouble).
    pub dropped: u64,
    /// Trace I/O errors.
    pub write_errors: u64,
    /// Collective metadata reads enabled on a FAPL seen by this process.
    pub coll_metadata_reads: bool,
    /// Collective metadata writes enabled on a FAPL seen by this process.
    pub coll_metadata_writes: bool,
}

/// Which of the three per-process files a path is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileRole {
    /// `<stem>.trace.{csv,jsonl}`
    Trace,
    /// `<stem>.objects.{csv,jsonl}`
    Objects,
    /// `<stem>.meta.json`
    Meta,
}

/// Text encoding of a trace or objects file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// Comma-separated values with one header row.
    Csv,
    /// One JSON object per line.
    Jsonl,
    /// One JSON document (`meta.json`).
    Json,
}

/// Classifies a file by its name; `None` for files that are not h5prov output.
/// A trailing `.gz` or `.zst` is reported by the caller, not here.
pub fn classify(path: &Path) -> Option<(FileRole, Encoding)> {
    let name = path.file_name()?.to_str()?;
    for (suffix, role, enc) in [
        (".trace.csv", FileRole::Trace, Encoding::Csv),
        (".trace.jsonl", FileRole::Trace, Encoding::Jsonl),
        (".objects.csv", FileRole::Objects, Encoding::Csv),
        (".objects.jsonl", FileRole::Objects, Encoding::Jsonl),
        (".meta.json", FileRole::Meta, Encoding::Json),
    ] {
        if name.ends_with(suffix) {
            return Some((role, enc));
        }
    }
    None
}

/// The family of an operation: everything before the first `:` (`dataset.get:space` →
/// `dataset.get`).
pub fn op_family(op: &str) -> &str {
    op.split_once(':').map_or(op, |(f, _)| f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classify_names() {
        assert_eq!(
            classify(Path::new("d0001/h5prov-r3-p9.trace.csv")),
            Some((FileRole::Trace, Encoding::Csv))
        );
        assert_eq!(
            classify(Path::new("x.objects.jsonl")),
            Some((FileRole::Objects, Encoding::Jsonl))
        );
        assert_eq!(
            classify(Path::new("x.meta.json")),
            Some((FileRole::Meta, Encoding::Json))
        );
        assert_eq!(classify(Path::new("x.csv")), None);
    }

    #[test]
    fn families() {
        assert_eq!(op_family("dataset.get:space"), "dataset.get");
        assert_eq!(op_family("file.close"), "file.close");
    }

    fn csv_header<T: Serialize>(v: &T) -> String {
        let mut w = csv::Writer::from_writer(Vec::new());
        w.serialize(v).unwrap();
        let bytes = w.into_inner().unwrap();
        String::from_utf8(bytes)
            .unwrap()
            .lines()
            .next()
            .unwrap()
            .to_string()
    }

    #[test]
    fn trace_columns_are_the_record_fields_in_order() {
        assert_eq!(csv_header(&TraceRecord::default()), TRACE_COLUMNS.join(","));
    }

    #[test]
    fn object_columns_are_the_summary_fields_in_order() {
        assert_eq!(
            csv_header(&ObjectSummary::default()),
            OBJECT_COLUMNS.join(",")
        );
    }
}

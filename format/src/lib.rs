//! The h5prov trace format, version 1: the contract between the connector that writes traces
//! and the analyzer that reads them. `docs/TRACE-FORMAT.md` explains every field.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

use serde::{Deserialize, Serialize};
use std::path::Path;

/// Version written in every `meta.json` as `format_version`.
pub const FORMAT_VERSION: u32 = 1;

pub mod auth;
mod bin;
mod bin_read;
mod field;
mod pending;
pub mod stream;
mod table;
pub mod tls;

pub use bin::{
    bin_records, get_varint, put_varint, BinBlock, BinDecoder, BinEncoder, BinError, BinSource,
    BinValue, BIN_MAGIC, BIN_MAX_COLUMNS, BIN_MAX_HEADER, BIN_MAX_RECORD, BIN_NUM_ROOM, BIN_SIGNED,
    BIN_TEXT, BIN_UNSIGNED, BIN_VERSION,
};
pub use bin_read::{
    open_bin_file, open_bin_stream, read_bin_file, BinFrame, BinHeader, BinItem, BinReadError,
    BinReader, BinRecords,
};
pub use field::{write_json_fields, JsonValue, JSON_PAD};
pub use pending::{
    parse_pending_header, pending_header, pending_state, PENDING_DRAINING, PENDING_LEN_MASK,
    PENDING_MAGIC, PENDING_MAX_SLOT, PENDING_SLOT_HEADER, PENDING_SUFFIX, PENDING_VERSION,
};
pub use table::{
    column_index, parse_i64, parse_u64, Column, ColumnKind, CsvFields, CsvHeader, CsvSource,
    FieldSink, FieldSource, JsonField,
};

// The trace-record schema: every column, in CSV order (also the JSONL keys, the order in
// which JSONL writes them). `docs/TRACE-FORMAT.md` describes each one; a new field is one
// row here plus its line there. Row: `field "column": type = empty value, rule;` (see
// `table.rs`).
table::record_table! {
    /// One traced VOL callback (or one dataset of a multi-dataset read/write).
    owned TraceRecord;
    /// A [`TraceRecord`] that borrows its text: what the connector encodes and the
    /// analyzer's readers hand out (no allocation per record).
    borrowed TraceRecordRef;
    /// A JSONL trace line as read: text borrowed from the line unless it holds escapes,
    /// missing keys `None`/empty. [`TraceRecordJson::record`] gives the record.
    json TraceRecordJson;
    /// Column names of a trace file, in CSV order (also the JSONL keys).
    columns TRACE_COLUMNS;
    what "trace";
    {
        /// Per-process sequence number, strictly increasing.
        seq "seq": u64 = 0, opt;
        /// Start of the callback, ns since the Unix epoch.
        start_ns "start_ns": u64 = 0, req;
        /// Duration of the whole callback, ns.
        total_ns "total_ns": u64 = 0, req;
        /// Time inside the under connector, ns.
        under_ns "under_ns": u64 = 0, opt;
        /// MPI rank from the launcher environment, -1 when unknown.
        rank "rank": i64 = -1, opt;
        /// Process id.
        pid "pid": u32 = 0, opt;
        /// Kernel thread id.
        tid "tid": u64 = 0, opt;
        /// Operation, `class.callback[:sub]`.
        op "op": str = "", nonempty;
        /// Object kind (`file`, `group`, `dataset`, ...), may be empty.
        kind "kind": str = "", opt;
        /// Container file name, may be empty.
        file "file": str = "", opt;
        /// Object path within the file, may be empty.
        path "path": str = "", opt;
        /// HDF5 status of the callback: 0 success, -1 failure.
        status "status": i32 = 0, opt;
        /// 1 when the operation was still in flight when the call returned (the under
        /// connector handed back a request: vol-async runs it in the background); 0 when it
        /// had finished, as always on the native connector.
        is_async "async": u8 = 0, opt;
        /// Data bytes moved.
        bytes "bytes": u64 = 0, opt;
        /// Memory datatype size for data I/O.
        type_size "type_size": u64 = 0, opt;
        /// Rank of the file dataspace for data I/O.
        ndims "ndims": u32 = 0, opt;
        /// Selected elements for data I/O.
        npoints "npoints": u64 = 0, opt;
        /// Selection kind: `all`, `none`, `points`, `hyperslab`, `irregular`, or empty.
        sel "sel": str = "", opt;
        /// Requested MPI-IO transfer mode, or empty.
        xfer "xfer": str = "", opt;
        /// MPI-IO transfer mode actually used, or empty.
        xfer_actual "xfer_actual": str = "", opt;
        /// Datasets in a multi-dataset call, 1 otherwise.
        batch "batch": u32 = 0, min1;
        /// Selection detail at `level=element`, else empty.
        detail "detail": str = "", opt;
        /// Memory datatype of data I/O (`float32le`, `int32be`, ...), else empty.
        mem_type "mem_type": str = "", opt;
        /// 1 when the memory datatype differs from the file datatype (HDF5 converts).
        conv "conv": u8 = 0, opt;
        /// Bytes in the file's datatype: selected points × file type size, 0 when unknown.
        file_bytes "file_bytes": u64 = 0, opt;
        /// Hyperslab blocks or points selected in the file space (`level>=dataset`).
        blocks "blocks": u64 = 0, opt;
        /// Bounding box of the file selection, `start:end` per dimension (`0:99x0:9`).
        bbox "bbox": str = "", opt;
        /// On the `link.create` that names an anonymous object (`H5Dcreate_anon`,
        /// `H5Gcreate_anon`, `H5Tcommit_anon`, then `H5Olink` or a hard link): the label
        /// the object's earlier records carry in `path`, `(anonymous #N of pid P)`. Those
        /// records belong to this record's `path`. Else empty.
        anon "anon": str = "", opt;
        /// Request id (per process, from 1): on the row of an operation still in flight
        /// when its call returned (`async` 1) and on the `request.*` rows of its request;
        /// 0 otherwise.
        req "req": u64 = 0, opt;
        /// On the first `request.wait`/`request.cancel` row that saw its request finished:
        /// 1 succeeded, 2 failed, 3 canceled (the operation completed by the end of that
        /// row: an observed upper bound); 0 otherwise.
        req_done "req_done": u8 = 0, opt;
        /// On the row with `req_done` 1: how long the operation ran, in ns, as the
        /// connector below h5prov answered `H5VL_REQUEST_GET_EXEC_TIME` once the request
        /// had finished (exact; vol-async needs the mended clock of docs/ASYNC.md); 0 when
        /// it gave no answer or 0, and on every other row.
        exec_ns "exec_ns": u64 = 0, opt;
    }
}

// The object-summary schema, as above.
table::record_table! {
    /// Summary of one object state node, written when its last reference goes.
    owned ObjectSummary;
    /// An [`ObjectSummary`] that borrows its text: what the connector encodes.
    borrowed ObjectSummaryRef;
    /// An objects-file JSONL line as read (see [`TraceRecordJson`]).
    json ObjectSummaryJson;
    /// Column names of an objects file, in CSV order (also the JSONL keys).
    columns OBJECT_COLUMNS;
    what "objects";
    {
        /// MPI rank, -1 when unknown.
        rank "rank": i64 = -1, opt;
        /// Process id.
        pid "pid": u32 = 0, opt;
        /// `file`, `group`, `dataset`, `attr` or `datatype`.
        kind "kind": str = "", req;
        /// Container file name.
        file "file": str = "", opt;
        /// Object path (the first one it was opened through).
        path "path": str = "", req;
        /// `fileno:token` in hex, empty for files.
        token "token": str = "", opt;
        /// Create/open calls that returned this object.
        opens "opens": u64 = 0, opt;
        /// Traced callbacks on this object.
        accesses "accesses": u64 = 0, opt;
        /// Data read calls.
        reads "reads": u64 = 0, opt;
        /// Data write calls.
        writes "writes": u64 = 0, opt;
        /// Data bytes read.
        bytes_read "bytes_read": u64 = 0, opt;
        /// Data bytes written.
        bytes_written "bytes_written": u64 = 0, opt;
        /// Time in read callbacks, ns.
        read_ns "read_ns": u64 = 0, opt;
        /// Time in write callbacks, ns.
        write_ns "write_ns": u64 = 0, opt;
        /// First access, ns since the epoch.
        first_ns "first_ns": u64 = 0, opt;
        /// Last access, ns since the epoch.
        last_ns "last_ns": u64 = 0, opt;
        /// Dataset dimensions such as `10x20`, else empty.
        dims "dims": str = "", opt;
        /// Dataset element size, else 0.
        type_size "type_size": u64 = 0, opt;
        /// Dataset layout, else empty.
        layout "layout": str = "", opt;
        /// Independent data transfers.
        ind_io "ind_io": u64 = 0, opt;
        /// Collective data transfers.
        coll_io "coll_io": u64 = 0, opt;
        /// Transfers requested collective but not done collectively.
        broken_coll_io "broken_coll_io": u64 = 0, opt;
        /// 1 when this process created the object.
        created "created": u8 = 0, opt;
        /// For files: datasets created in it.
        dsets_created "dsets_created": u64 = 0, opt;
        /// For files: datasets opened in it.
        dsets_opened "dsets_opened": u64 = 0, opt;
        /// For files: groups created in it.
        groups_created "groups_created": u64 = 0, opt;
        /// For files: groups opened in it.
        groups_opened "groups_opened": u64 = 0, opt;
        /// For files: first open to last close, ns.
        open_ns "open_ns": u64 = 0, opt;
        /// Dataset chunk dimensions such as `64x64`, empty unless chunked.
        chunk "chunk": str = "", opt;
        /// Dataset file datatype (`float64le`, `int32be`, `string16`, ...), else empty.
        ftype "ftype": str = "", opt;
        /// Dataset filter pipeline in order (`shuffle+deflate(6)`), else empty.
        filters "filters": str = "", opt;
        /// Dataset fill time: `alloc`, `never`, `ifset`, else empty.
        fill_time "fill_time": str = "", opt;
        /// Dataset allocation time: `early`, `late`, `incr`, else empty.
        alloc_time "alloc_time": str = "", opt;
        /// Chunk cache set on the DAPL, `nslots:nbytes:w0`; empty when left to the file.
        cache "cache": str = "", opt;
        /// Data bytes read, in the file's datatype.
        file_bytes_read "file_bytes_read": u64 = 0, opt;
        /// Data bytes written, in the file's datatype.
        file_bytes_written "file_bytes_written": u64 = 0, opt;
        /// For files: 1 when opened with the MPI-IO driver (`H5Pset_fapl_mpio`).
        mpio "mpio": u8 = 0, opt;
        /// For files: the FAPL's `H5Pset_alignment`, `threshold:alignment` (`1:1` is
        /// HDF5's default, no alignment); empty when not recorded.
        align "align": str = "", opt;
        /// For files: the file system holding the file (`lustre`, `gpfs`, `beegfs`, `nfs`,
        /// `ext4`, `xfs`, `tmpfs`, ..., else the `statfs` magic in hex); empty when unknown.
        fs "fs": str = "", opt;
        /// Datasets: the fill value (`H5Pfill_value_defined`): `default` (HDF5's zeros),
        /// `user` (`H5Pset_fill_value`), `undefined` (set to none); empty when not known.
        fill "fill": str = "", opt;
        /// For files: the device number of the file (`st_dev`), 0 when unknown.
        dev "dev": u64 = 0, opt;
        /// For files: the inode number of the file (`st_ino`), 0 when unknown. With `dev`,
        /// the file's identity whatever path it was opened by.
        ino "ino": u64 = 0, opt;
        /// For files: size in bytes as the first open or create of the process found the
        /// file (before it), 0 when it did not exist.
        open_size "open_size": u64 = 0, opt;
        /// For files: modification time then, ns since the epoch; 0 when unknown or new.
        open_mtime_ns "open_mtime_ns": u64 = 0, opt;
        /// For files: size in bytes at the last close of the process.
        close_size "close_size": u64 = 0, opt;
        /// For files: modification time then, ns since the epoch; 0 when unknown.
        close_mtime_ns "close_mtime_ns": u64 = 0, opt;
        /// For files: how the process opened it, the strongest of its opens: `truncate`
        /// (created over an existing file), `create` (created a new file), `rw`
        /// (read-write) or `ro` (read-only); empty when unknown.
        intent "intent": str = "", opt;
        /// For files: the low bound of the FAPL's `H5Pset_libver_bounds` (`earliest`,
        /// `v18`, `v110`, `v112`, `v114`, `v200`, `later`); empty when not recorded. With
        /// `earliest` (HDF5's default) object headers are version 1: attributes stay in
        /// the header, never in dense storage.
        libver "libver": str = "", opt;
        /// Datasets with a filter pipeline: the bytes their storage takes in the file
        /// (`H5Dget_storage_size`: the stored, filtered chunks), asked once per dataset close
        /// of the process; 0 when not filtered or not known. Against `dims` × `type_size`
        /// it is the compression ratio the filters reach.
        stored_bytes "stored_bytes": u64 = 0, opt;
    }
}

impl TraceRecordRef<'_> {
    /// End of the callback, ns since the epoch.
    pub fn end_ns(&self) -> u64 {
        self.start_ns.saturating_add(self.total_ns)
    }
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
    /// The launcher's job id (`SLURM_JOB_ID`, `PBS_JOBID`, `LSB_JOBID`, `COBALT_JOBID`,
    /// `FLUX_JOB_ID`, then the PMIx namespace or Open MPI's job id); empty when there is
    /// none, and in traces written before h5prov recorded it.
    #[serde(default)]
    pub job_id: String,
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
    /// Trace format name (`csv`, `jsonl` or `bin`).
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
    /// `stream=`: messages the collector's socket took (`None` without streaming).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream_sent: Option<u64>,
    /// `stream=`: messages made but not sent (collector slow, gone or absent; queue full).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream_dropped: Option<u64>,
}

/// Which of the three per-process files a path is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileRole {
    /// `<stem>.trace.{csv,jsonl,bin}`
    Trace,
    /// `<stem>.objects.{csv,jsonl,bin}`
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
    /// The binary encoding: a header naming the columns, then length-prefixed records.
    Bin,
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
        (".trace.bin", FileRole::Trace, Encoding::Bin),
        (".objects.bin", FileRole::Objects, Encoding::Bin),
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
        assert_eq!(
            classify(Path::new("x.trace.bin")),
            Some((FileRole::Trace, Encoding::Bin))
        );
        assert_eq!(
            classify(Path::new("x.objects.bin")),
            Some((FileRole::Objects, Encoding::Bin))
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

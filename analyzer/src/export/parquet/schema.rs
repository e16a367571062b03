//! The Arrow schemas of the four tables of a Parquet export, built from the format's record
//! tables ([`TraceRecordRef::KINDS`], [`ObjectSummaryRef::KINDS`]) and from
//! [`ProcessMeta`](h5prov_format::ProcessMeta)'s JSON keys: a column added to a table is a column of the export.

use arrow_schema::{DataType, Field, Schema, SchemaRef};
use h5prov_format::{ColumnKind, ObjectSummaryRef, TraceRecordRef, OBJECT_COLUMNS, TRACE_COLUMNS};
use std::sync::Arc;

/// The tables of an export, each a directory of `job=<id>/` partitions.
pub const TABLES: [&str; 4] = ["records", "objects", "processes", "files"];

/// Provenance column of `records` and `objects`: the path of the file a row was read from,
/// as the exporter was given it (what the analyzer's messages name).
pub const SOURCE: &str = "source";
/// Provenance column of `records`: the record's line in its file (a binary record's is the
/// line it would have in the CSV file).
pub const LINE: &str = "line";

/// The Arrow type a table column is stored as. Engines such as Spark have no unsigned
/// integers, so every integer is signed: `u64` is stored as `int64` bit for bit (a value
/// of 2^63 or more, which the analyzer treats as a bad timestamp anyway, reads as negative
/// in SQL and back exactly in `h5prov report`); `u32` widens to `int64`, `u8` to `int32`.
pub fn arrow_type(k: ColumnKind) -> DataType {
    match k {
        ColumnKind::U64 | ColumnKind::U32 | ColumnKind::I64 => DataType::Int64,
        ColumnKind::U8 | ColumnKind::I32 => DataType::Int32,
        ColumnKind::Text => DataType::Utf8,
    }
}

fn table_schema(columns: &[&str], kinds: &[ColumnKind], line: bool) -> SchemaRef {
    let mut fields: Vec<Field> = columns
        .iter()
        .zip(kinds)
        .map(|(c, k)| Field::new(*c, arrow_type(*k), false))
        .collect();
    fields.push(Field::new(SOURCE, DataType::Utf8, false));
    if line {
        fields.push(Field::new(LINE, DataType::Int64, false));
    }
    Arc::new(Schema::new(fields))
}

/// `records`: the trace-record table's columns, then [`SOURCE`] and [`LINE`].
pub fn records_schema() -> SchemaRef {
    table_schema(TRACE_COLUMNS, TraceRecordRef::KINDS, true)
}

/// `objects`: the object-summary table's columns, then [`SOURCE`].
pub fn objects_schema() -> SchemaRef {
    table_schema(OBJECT_COLUMNS, ObjectSummaryRef::KINDS, false)
}

/// How a [`ProcessMeta`](h5prov_format::ProcessMeta) key is stored in `processes`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetaKind {
    /// Unsigned integer (`u64` bit for bit, `u32` widened) as `int64`.
    Unsigned,
    /// Signed integer as `int64`.
    Signed,
    /// Unsigned integer or null (`end_ns`), as nullable `int64`.
    OptUnsigned,
    /// Text.
    Text,
    /// List of text (`cmdline`).
    TextList,
    /// Boolean.
    Bool,
}

/// The `processes` columns: every `meta.json` key in [`ProcessMeta`](h5prov_format::ProcessMeta)'s
/// order (a test checks the list against the struct), then `incomplete` (`end_ns` is null:
/// the process did not finish; derived, not read back) and [`SOURCE`] (the meta file).
pub const PROCESS_COLUMNS: &[(&str, MetaKind)] = &[
    ("format_version", MetaKind::Unsigned),
    ("uid", MetaKind::Unsigned),
    ("user", MetaKind::Text),
    ("host", MetaKind::Text),
    ("pid", MetaKind::Unsigned),
    ("rank", MetaKind::Signed),
    ("world_size", MetaKind::Signed),
    ("job_id", MetaKind::Text),
    ("exe", MetaKind::Text),
    ("cmdline", MetaKind::TextList),
    ("hdf5_version", MetaKind::Text),
    ("hdf5_library", MetaKind::Text),
    ("connector", MetaKind::Text),
    ("level", MetaKind::Text),
    ("format", MetaKind::Text),
    ("anchor_wall_ns", MetaKind::Unsigned),
    ("anchor_mono_ns", MetaKind::Unsigned),
    ("start_ns", MetaKind::Unsigned),
    ("end_ns", MetaKind::OptUnsigned),
    ("records", MetaKind::Unsigned),
    ("bytes_written", MetaKind::Unsigned),
    ("self_ns", MetaKind::Unsigned),
    ("dropped", MetaKind::Unsigned),
    ("write_errors", MetaKind::Unsigned),
    ("coll_metadata_reads", MetaKind::Bool),
    ("coll_metadata_writes", MetaKind::Bool),
    ("stream_sent", MetaKind::OptUnsigned),
    ("stream_dropped", MetaKind::OptUnsigned),
];

/// The derived `processes` column: the process did not finish (`end_ns` is null).
pub const INCOMPLETE: &str = "incomplete";

/// The Arrow type of a `processes` column.
pub fn meta_type(k: MetaKind) -> DataType {
    match k {
        MetaKind::Unsigned | MetaKind::Signed | MetaKind::OptUnsigned => DataType::Int64,
        MetaKind::Text => DataType::Utf8,
        MetaKind::TextList => DataType::List(Arc::new(Field::new("item", DataType::Utf8, true))),
        MetaKind::Bool => DataType::Boolean,
    }
}

/// `processes`: [`PROCESS_COLUMNS`], [`INCOMPLETE`], [`SOURCE`].
pub fn processes_schema() -> SchemaRef {
    let mut fields: Vec<Field> = PROCESS_COLUMNS
        .iter()
        .map(|(c, k)| Field::new(*c, meta_type(*k), *k == MetaKind::OptUnsigned))
        .collect();
    fields.push(Field::new(INCOMPLETE, DataType::Boolean, false));
    fields.push(Field::new(SOURCE, DataType::Utf8, false));
    Arc::new(Schema::new(fields))
}

/// `files`: one row per file read, what reading it found (what `h5prov report` needs to
/// give the same diagnostics from the export as from the files).
pub fn files_schema() -> SchemaRef {
    let i64n = |n: &str| Field::new(n, DataType::Int64, true);
    let text = |n: &str, null: bool| Field::new(n, DataType::Utf8, null);
    Arc::new(Schema::new(vec![
        text(SOURCE, false),
        // `trace`, `objects` or `meta`.
        text("role", false),
        // `csv`, `jsonl`, `bin` or `json`.
        text("encoding", false),
        Field::new("rows", DataType::Int64, false),
        Field::new("data_bytes", DataType::Int64, false),
        i64n("truncated_line"),
        Field::new("malformed", DataType::Int64, false),
        i64n("first_malformed_line"),
        text("first_malformed_reason", true),
        // For a meta file that could not be used: `unreadable` or `wrong_type`, and why.
        text("meta_error_kind", true),
        text("meta_error", true),
    ]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use h5prov_format::ProcessMeta;

    #[test]
    fn record_tables_are_the_export_tables() {
        // By construction: every table column, in order, with its declared type.
        for (schema, cols, kinds, extra) in [
            (records_schema(), TRACE_COLUMNS, TraceRecordRef::KINDS, 2),
            (objects_schema(), OBJECT_COLUMNS, ObjectSummaryRef::KINDS, 1),
        ] {
            assert_eq!(schema.fields().len(), cols.len() + extra);
            for ((f, c), k) in schema.fields().iter().zip(cols).zip(kinds) {
                assert_eq!(f.name(), c);
                assert_eq!(f.data_type(), &arrow_type(*k));
            }
            assert!(!cols.contains(&SOURCE) && !cols.contains(&LINE));
        }
        assert_eq!(TraceRecordRef::KINDS.len(), TRACE_COLUMNS.len());
        assert_eq!(ObjectSummaryRef::KINDS.len(), OBJECT_COLUMNS.len());
    }

    #[test]
    fn process_columns_are_the_meta_keys_in_order() {
        // Fails when a field is added to ProcessMeta and not to PROCESS_COLUMNS.
        let v = serde_json::to_value(ProcessMeta {
            end_ns: Some(1),
            stream_sent: Some(1),
            stream_dropped: Some(1),
            ..ProcessMeta::default()
        })
        .unwrap();
        let mut keys: Vec<&str> = v.as_object().unwrap().keys().map(|k| k.as_str()).collect();
        let mut cols: Vec<&str> = PROCESS_COLUMNS.iter().map(|(c, _)| *c).collect();
        keys.sort_unstable();
        cols.sort_unstable();
        assert_eq!(keys, cols);
        for (c, k) in PROCESS_COLUMNS {
            let val = &v[*c];
            let ok = match k {
                MetaKind::Unsigned | MetaKind::OptUnsigned => val.is_u64(),
                MetaKind::Signed => val.is_i64(),
                MetaKind::Text => val.is_string(),
                MetaKind::TextList => val.is_array(),
                MetaKind::Bool => val.is_boolean(),
            };
            assert!(ok, "{c}: {val} is not a {k:?}");
        }
    }
}

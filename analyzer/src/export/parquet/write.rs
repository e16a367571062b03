//! Writing a job's traces as a partition of each table of a Parquet export.

use super::schema::{
    files_schema, objects_schema, processes_schema, records_schema, MetaKind, LINE,
    PROCESS_COLUMNS, TABLES,
};
use super::{commit, job_dir, partition_exists};
use crate::read::objects::{read_meta_checked, read_objects, MetaError};
use crate::read::stream_capture::{read_capture, STREAM_FORMAT};
use crate::read::{read_trace_lines, Error, FileDiag, InputFile, Inputs, ReadOptions};
use arrow_array::builder::{
    BooleanBuilder, Int32Builder, Int64Builder, ListBuilder, StringBuilder,
};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, SchemaRef};
use h5prov_format::{Encoding, FieldSink, ProcessMeta};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, Encoding as PqEncoding, ZstdLevel};
use parquet::file::properties::WriterProperties;
use parquet::schema::types::ColumnPath;
use std::fs::File;
use std::path::{Path, PathBuf};

/// Rows per Arrow batch handed to the Parquet writer.
const BATCH_ROWS: usize = 64 * 1024;

/// What exporting one job wrote and found.
#[derive(Debug, Clone, Default)]
pub struct ExportStats {
    /// The job id (the partition `job=<id>`).
    pub job: String,
    /// Trace records written.
    pub records: u64,
    /// Objects rows written.
    pub objects: u64,
    /// Processes (readable meta files) written.
    pub processes: u64,
    /// Files read.
    pub files: u64,
    /// Bytes of the files read, as stored.
    pub bytes_in: u64,
    /// Bytes of the Parquet files written.
    pub bytes_out: u64,
    /// Files with a truncated last line, and that line.
    pub truncated: Vec<(String, u64)>,
    /// Malformed rows skipped (`--lenient`).
    pub malformed_rows: u64,
    /// The first malformed row (smallest path): file, line, reason.
    pub first_malformed: Option<(String, u64, String)>,
    /// Meta files that could not be used: file and reason.
    pub bad_metas: Vec<(String, String)>,
}

fn pq_err(path: &Path, e: impl std::fmt::Display) -> Error {
    Error::Other(format!("{}: writing Parquet: {e}", path.display()))
}

/// The writer settings: Zstandard, dictionary-encoded columns (strings above all), and
/// delta encoding for the columns that grow row by row (`seq`, `start_ns`, `line`).
fn props(delta: &[&str]) -> WriterProperties {
    let mut b = WriterProperties::builder()
        .set_compression(Compression::ZSTD(
            ZstdLevel::try_new(3).expect("valid level"),
        ))
        .set_dictionary_enabled(true);
    for c in delta {
        let p = ColumnPath::from(*c);
        b = b
            .set_column_dictionary_enabled(p.clone(), false)
            .set_column_encoding(p, PqEncoding::DELTA_BINARY_PACKED);
    }
    b.build()
}

/// One column being built.
enum ColBuf {
    I64(Int64Builder),
    I32(Int32Builder),
    Text(StringBuilder),
}

impl ColBuf {
    fn new(t: &DataType) -> ColBuf {
        match t {
            DataType::Int64 => ColBuf::I64(Int64Builder::with_capacity(BATCH_ROWS)),
            DataType::Int32 => ColBuf::I32(Int32Builder::with_capacity(BATCH_ROWS)),
            _ => ColBuf::Text(StringBuilder::with_capacity(BATCH_ROWS, BATCH_ROWS * 8)),
        }
    }

    fn finish(&mut self) -> ArrayRef {
        match self {
            ColBuf::I64(b) => std::sync::Arc::new(b.finish()),
            ColBuf::I32(b) => std::sync::Arc::new(b.finish()),
            ColBuf::Text(b) => std::sync::Arc::new(b.finish()),
        }
    }
}

/// A record table (`records` or `objects`) being written to one Parquet file: rows are
/// handed over field by field through [`FieldSink`] (the encoder the format generates
/// from the table), then [`TableWriter::end_row`] adds the provenance columns.
struct TableWriter {
    schema: SchemaRef,
    cols: Vec<ColBuf>,
    rows: usize,
    written: u64,
    path: PathBuf,
    w: ArrowWriter<File>,
}

impl TableWriter {
    fn create(path: PathBuf, schema: SchemaRef, delta: &[&str]) -> Result<TableWriter, Error> {
        let f = File::create(&path).map_err(|e| Error::io(&path, e))?;
        let w = ArrowWriter::try_new(f, schema.clone(), Some(props(delta)))
            .map_err(|e| pq_err(&path, e))?;
        let cols = schema
            .fields()
            .iter()
            .map(|f| ColBuf::new(f.data_type()))
            .collect();
        Ok(TableWriter {
            schema,
            cols,
            rows: 0,
            written: 0,
            path,
            w,
        })
    }

    /// Ends a row with its provenance: the file, and (in `records`) the line.
    fn end_row(&mut self, source: &str, line: Option<u64>) -> Result<(), Error> {
        let n = self.cols.len();
        let at = n - 1 - usize::from(line.is_some());
        if let ColBuf::Text(b) = &mut self.cols[at] {
            b.append_value(source);
        }
        if let (Some(l), ColBuf::I64(b)) = (line, &mut self.cols[n - 1]) {
            b.append_value(l as i64);
        }
        self.rows += 1;
        if self.rows >= BATCH_ROWS {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<(), Error> {
        if self.rows == 0 {
            return Ok(());
        }
        let arrays: Vec<ArrayRef> = self.cols.iter_mut().map(ColBuf::finish).collect();
        let batch =
            RecordBatch::try_new(self.schema.clone(), arrays).map_err(|e| pq_err(&self.path, e))?;
        self.w.write(&batch).map_err(|e| pq_err(&self.path, e))?;
        self.written += self.rows as u64;
        self.rows = 0;
        Ok(())
    }

    fn close(mut self) -> Result<u64, Error> {
        self.flush()?;
        self.w.close().map_err(|e| pq_err(&self.path, e))?;
        Ok(self.written)
    }
}

impl<'a> FieldSink<'a> for TableWriter {
    #[inline]
    fn unsigned(&mut self, col: usize, v: u64) {
        match &mut self.cols[col] {
            // Bit for bit (see `schema::arrow_type`).
            ColBuf::I64(b) => b.append_value(v as i64),
            // u8: always fits.
            ColBuf::I32(b) => b.append_value(v as i32),
            ColBuf::Text(_) => unreachable!("schema built from the table"),
        }
    }

    #[inline]
    fn signed(&mut self, col: usize, v: i64) {
        match &mut self.cols[col] {
            ColBuf::I64(b) => b.append_value(v),
            // i32: always fits.
            ColBuf::I32(b) => b.append_value(v as i32),
            ColBuf::Text(_) => unreachable!("schema built from the table"),
        }
    }

    #[inline]
    fn text(&mut self, col: usize, v: &'a str) {
        match &mut self.cols[col] {
            ColBuf::Text(b) => b.append_value(v),
            _ => unreachable!("schema built from the table"),
        }
    }
}

/// One row of the `files` table.
#[derive(Debug, Clone, Default)]
struct FileRow {
    source: String,
    role: &'static str,
    encoding: &'static str,
    diag: FileDiag,
    meta_error: Option<(&'static str, String)>,
    /// A trace's last call's end (`start_ns + total_ns`, the largest), 0 if none.
    last_end_ns: u64,
}

fn encoding_name(e: Encoding) -> &'static str {
    match e {
        Encoding::Csv => "csv",
        Encoding::Jsonl => "jsonl",
        Encoding::Bin => "bin",
        Encoding::Json => "json",
    }
}

/// Splits files among `n` workers, biggest first onto the least loaded (deterministic).
fn assign(
    files: Vec<(&InputFile, Encoding, bool)>,
    n: usize,
) -> Vec<Vec<(&InputFile, Encoding, bool)>> {
    let mut files = files;
    files.sort_by(|a, b| {
        b.0.size
            .cmp(&a.0.size)
            .then_with(|| a.0.path.cmp(&b.0.path))
    });
    let mut load = vec![0u64; n];
    let mut out = vec![Vec::new(); n];
    for f in files {
        let (i, _) = load
            .iter()
            .enumerate()
            .min_by_key(|(i, l)| (**l, *i))
            .expect("n > 0");
        load[i] += f.0.size.max(1);
        out[i].push(f);
    }
    for v in &mut out {
        v.sort_by(|a, b| a.0.path.cmp(&b.0.path));
    }
    out
}

fn keep_first_error(err: &mut Option<Error>, e: Error) {
    *err = Some(match err.take() {
        Some(a) if a.sort_key() <= e.sort_key() => a,
        _ => e,
    });
}

/// One worker: its share of the trace and objects files into `part-<i>.parquet` of
/// `records` and `objects` under `tmp`.
fn worker(
    i: usize,
    files: &[(&InputFile, Encoding, bool)],
    tmp: &Path,
    opts: &ReadOptions,
    progress: &(dyn Fn(u64) + Sync),
) -> (Vec<FileRow>, u64, u64, Option<Error>) {
    let mut rows = Vec::new();
    let mut err = None;
    let name = format!("part-{i}.parquet");
    let mut rec = match TableWriter::create(
        tmp.join("records").join(&name),
        records_schema(),
        &["seq", "start_ns", LINE],
    ) {
        Ok(w) => w,
        Err(e) => return (rows, 0, 0, Some(e)),
    };
    let mut obj = match TableWriter::create(tmp.join("objects").join(&name), objects_schema(), &[])
    {
        Ok(w) => w,
        Err(e) => return (rows, 0, 0, Some(e)),
    };
    for (f, enc, is_trace) in files {
        let source = f.path.display().to_string();
        let mut werr: Option<Error> = None;
        let mut last_end_ns = 0u64;
        let r = if *is_trace {
            read_trace_lines(&f.path, *enc, opts, |line, r| {
                last_end_ns = last_end_ns.max(r.start_ns.saturating_add(r.total_ns));
                if werr.is_none() {
                    r.write_fields(&mut rec);
                    if let Err(e) = rec.end_row(&source, Some(line)) {
                        werr = Some(e);
                    }
                }
            })
        } else {
            read_objects(&f.path, *enc, opts, |o| {
                if werr.is_none() {
                    o.write_fields(&mut obj);
                    if let Err(e) = obj.end_row(&source, None) {
                        werr = Some(e);
                    }
                }
            })
        };
        progress(f.size);
        match (r, werr) {
            (_, Some(e)) | (Err(e), None) => keep_first_error(&mut err, e),
            (Ok(d), None) => rows.push(FileRow {
                source,
                role: if *is_trace { "trace" } else { "objects" },
                encoding: encoding_name(*enc),
                diag: d,
                meta_error: None,
                last_end_ns,
            }),
        }
    }
    let nrec = rec.close().unwrap_or_else(|e| {
        keep_first_error(&mut err, e);
        0
    });
    let nobj = obj.close().unwrap_or_else(|e| {
        keep_first_error(&mut err, e);
        0
    });
    (rows, nrec, nobj, err)
}

fn write_batch(path: &Path, schema: SchemaRef, arrays: Vec<ArrayRef>) -> Result<(), Error> {
    let f = File::create(path).map_err(|e| Error::io(path, e))?;
    let mut w =
        ArrowWriter::try_new(f, schema.clone(), Some(props(&[]))).map_err(|e| pq_err(path, e))?;
    let batch = RecordBatch::try_new(schema, arrays).map_err(|e| pq_err(path, e))?;
    w.write(&batch).map_err(|e| pq_err(path, e))?;
    w.close().map_err(|e| pq_err(path, e))?;
    Ok(())
}

/// The `processes` table of the readable metas (with their files).
/// Finishes the meta of each process that ended without closing HDF5, as the report does
/// ([`crate::aggregate::Aggregate::finish_unclosed`]): when its one trace was read with its
/// pending sidecar and nothing was cut, nothing was lost, so its `records`,
/// `bytes_written` and `end_ns` (its last call's end) come from the data. Its row then has
/// an `end_ns` and is not `incomplete`; a cut trace, or one without a sidecar, stays
/// incomplete with a null `end_ns`.
fn finish_unclosed(metas: &mut [(String, ProcessMeta)], file_rows: &[FileRow]) {
    let mut traces: std::collections::HashMap<String, Vec<&FileRow>> = Default::default();
    for r in file_rows.iter().filter(|r| r.role == "trace") {
        traces
            .entry(crate::aggregate::check::stem(Path::new(&r.source)))
            .or_default()
            .push(r);
    }
    for (source, m) in metas.iter_mut() {
        if m.end_ns.is_some() || m.format == STREAM_FORMAT {
            continue;
        }
        let Some([t]) = traces
            .get(&crate::aggregate::check::stem(Path::new(source)))
            .map(|v| &v[..])
        else {
            continue;
        };
        if !t.diag.recovered || t.diag.truncated_line.is_some() {
            continue;
        }
        m.records = t.diag.rows + t.diag.malformed;
        m.bytes_written = t.diag.data_bytes;
        m.end_ns = Some(t.last_end_ns.max(m.start_ns));
    }
}

fn write_processes(path: &Path, metas: &[(String, ProcessMeta)]) -> Result<(), Error> {
    let schema = processes_schema();
    let mut arrays: Vec<ArrayRef> = Vec::new();
    let values: Vec<serde_json::Value> = metas
        .iter()
        .map(|(_, m)| serde_json::to_value(m).expect("a meta serializes"))
        .collect();
    for (c, k) in PROCESS_COLUMNS {
        let col = values.iter().map(|v| &v[*c]);
        let a: ArrayRef = match k {
            MetaKind::Unsigned | MetaKind::Signed | MetaKind::OptUnsigned => {
                let mut b = Int64Builder::new();
                for v in col {
                    // u64 bit for bit, like the record tables.
                    match v.as_i64().or_else(|| v.as_u64().map(|x| x as i64)) {
                        Some(x) => b.append_value(x),
                        None => b.append_null(),
                    }
                }
                std::sync::Arc::new(b.finish())
            }
            MetaKind::Text => {
                let mut b = StringBuilder::new();
                for v in col {
                    b.append_value(v.as_str().unwrap_or(""));
                }
                std::sync::Arc::new(b.finish())
            }
            MetaKind::TextList => {
                let mut b = ListBuilder::new(StringBuilder::new());
                for v in col {
                    for s in v.as_array().into_iter().flatten() {
                        b.values().append_value(s.as_str().unwrap_or(""));
                    }
                    b.append(true);
                }
                std::sync::Arc::new(b.finish())
            }
            MetaKind::Bool => {
                let mut b = BooleanBuilder::new();
                for v in col {
                    b.append_value(v.as_bool().unwrap_or(false));
                }
                std::sync::Arc::new(b.finish())
            }
        };
        arrays.push(a);
    }
    let mut inc = BooleanBuilder::new();
    let mut src = StringBuilder::new();
    for (s, m) in metas {
        // A stream's `hello` has no end to miss.
        inc.append_value(m.end_ns.is_none() && m.format != STREAM_FORMAT);
        src.append_value(s);
    }
    arrays.push(std::sync::Arc::new(inc.finish()));
    arrays.push(std::sync::Arc::new(src.finish()));
    write_batch(path, schema, arrays)
}

/// The `files` table.
fn write_files(path: &Path, rows: &[FileRow]) -> Result<(), Error> {
    let mut source = StringBuilder::new();
    let mut role = StringBuilder::new();
    let mut enc = StringBuilder::new();
    let mut nrows = Int64Builder::new();
    let mut data_bytes = Int64Builder::new();
    let mut trunc = Int64Builder::new();
    let mut malformed = Int64Builder::new();
    let mut fm_line = Int64Builder::new();
    let mut fm_reason = StringBuilder::new();
    let mut me_kind = StringBuilder::new();
    let mut me = StringBuilder::new();
    for r in rows {
        source.append_value(&r.source);
        role.append_value(r.role);
        enc.append_value(r.encoding);
        nrows.append_value(r.diag.rows as i64);
        data_bytes.append_value(r.diag.data_bytes as i64);
        trunc.append_option(r.diag.truncated_line.map(|l| l as i64));
        malformed.append_value(r.diag.malformed as i64);
        fm_line.append_option(r.diag.first_malformed.as_ref().map(|(l, _)| *l as i64));
        fm_reason.append_option(r.diag.first_malformed.as_ref().map(|(_, s)| s));
        me_kind.append_option(r.meta_error.as_ref().map(|(k, _)| *k));
        me.append_option(r.meta_error.as_ref().map(|(_, s)| s));
    }
    let arrays: Vec<ArrayRef> = vec![
        std::sync::Arc::new(source.finish()),
        std::sync::Arc::new(role.finish()),
        std::sync::Arc::new(enc.finish()),
        std::sync::Arc::new(nrows.finish()),
        std::sync::Arc::new(data_bytes.finish()),
        std::sync::Arc::new(trunc.finish()),
        std::sync::Arc::new(malformed.finish()),
        std::sync::Arc::new(fm_line.finish()),
        std::sync::Arc::new(fm_reason.finish()),
        std::sync::Arc::new(me_kind.finish()),
        std::sync::Arc::new(me.finish()),
    ];
    write_batch(path, files_schema(), arrays)
}

fn dir_bytes(dir: &Path) -> u64 {
    let mut n = 0;
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                n += dir_bytes(&p);
            } else if let Ok(m) = e.metadata() {
                n += m.len();
            }
        }
    }
    n
}

/// Exports one job's files (`inputs`) into `out` as the partition `job=<job>` of every
/// table, reading on the current rayon pool (one `records` and one `objects` Parquet file
/// per worker). Reading follows `h5prov report`: a malformed row fails the export (naming
/// file and line) unless `opts.lenient`, a meta from a newer format too. The job appears in
/// every table or in none, even if the export is killed ([`super::commit`]): what dead
/// exports left is finished or removed first; an export that fails leaves nothing; an
/// existing partition of the job, or another export of it running, is an error; no other
/// partition is touched.
pub fn export_job(
    out: &Path,
    job: &str,
    inputs: &Inputs,
    opts: &ReadOptions,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<ExportStats, Error> {
    std::fs::create_dir_all(out).map_err(|e| Error::io(out, e))?;
    let r = export_locked(out, job, inputs, opts, progress);
    // The staging directory beside `out` goes once nothing is staged.
    let _ = std::fs::remove_dir(commit::staging_root(out));
    r
}

/// [`export_job`] into an existing `out`, under the job's lock.
fn export_locked(
    out: &Path,
    job: &str,
    inputs: &Inputs,
    opts: &ReadOptions,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<ExportStats, Error> {
    commit::recover(out)?;
    let lock = commit::acquire(out, job)?;
    // An export of this job that died after its commit: finish it (then it exists).
    commit::finish(out, job, &lock)?;
    if let Some(p) = partition_exists(out, job) {
        return Err(Error::Other(format!(
            "{}: job {job} was already exported to {}; nothing was written (an export adds \
             a job and rewrites nothing: remove job={job} from every table to export it \
             again, or name this one differently with --job)",
            p.display(),
            out.display()
        )));
    }
    let tmp = commit::staging_dir(out, job);
    for t in TABLES {
        std::fs::create_dir_all(tmp.join(t)).map_err(|e| Error::io(&tmp.join(t), e))?;
    }
    let r = export_into(&tmp, job, inputs, opts, progress).and_then(|mut stats| {
        commit::step("staged");
        let marker = tmp.join("COMMIT");
        let part = tmp.join("COMMIT.part");
        std::fs::write(&part, format!("{job}\n")).map_err(|e| Error::io(&part, e))?;
        // The commit point: from here on the job is exported.
        std::fs::rename(&part, &marker).map_err(|e| Error::io(&marker, e))?;
        commit::step("committed");
        commit::finish(out, job, &lock)?;
        stats.bytes_out = TABLES
            .iter()
            .map(|t| dir_bytes(&job_dir(out, t, job)))
            .sum();
        Ok(stats)
    });
    if r.is_err() && !commit::pending(out, job) {
        let _ = std::fs::remove_dir_all(&tmp);
    }
    drop(lock);
    r
}

/// The stream captures of `inputs` into `records/part-stream.parquet`: each process's
/// events as the records of its source (`role` `stream` in `files`), its `hello` as its
/// meta, and a `files` row per capture file (`role` `capture`). Returns the records written.
fn export_capture(
    tmp: &Path,
    inputs: &Inputs,
    opts: &ReadOptions,
    file_rows: &mut Vec<FileRow>,
    metas: &mut Vec<(String, ProcessMeta)>,
) -> Result<u64, Error> {
    let cap = read_capture(&inputs.streams, opts)?;
    let mut rec = TableWriter::create(
        tmp.join("records").join("part-stream.parquet"),
        records_schema(),
        &["seq", "start_ns", LINE],
    )?;
    for p in &cap.processes {
        let source = p.source.display().to_string();
        for i in 0..p.events.len() {
            let (line, r) = p.record(i, &cap)?;
            r.write_fields(&mut rec);
            rec.end_row(&source, Some(line))?;
        }
        file_rows.push(FileRow {
            source: source.clone(),
            role: "stream",
            encoding: "jsonl",
            diag: FileDiag {
                rows: p.events.len() as u64,
                ..FileDiag::default()
            },
            ..FileRow::default()
        });
        if let Some(m) = &p.meta {
            metas.push((source.clone(), m.clone()));
            file_rows.push(FileRow {
                source,
                role: "meta",
                encoding: "json",
                ..FileRow::default()
            });
        }
    }
    for (p, d) in &cap.files {
        file_rows.push(FileRow {
            source: p.display().to_string(),
            role: "capture",
            encoding: "jsonl",
            diag: d.clone(),
            ..FileRow::default()
        });
    }
    rec.close()
}

fn export_into(
    tmp: &Path,
    job: &str,
    inputs: &Inputs,
    opts: &ReadOptions,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<ExportStats, Error> {
    let mut stats = ExportStats {
        job: job.to_string(),
        bytes_in: inputs.total_bytes(),
        ..ExportStats::default()
    };
    let mut file_rows = Vec::new();
    let mut metas = Vec::new();
    for f in &inputs.metas {
        let source = f.path.display().to_string();
        let r = read_meta_checked(&f.path);
        let mut row = FileRow {
            source: source.clone(),
            role: "meta",
            encoding: "json",
            ..FileRow::default()
        };
        match r {
            Ok(m) => {
                let supported = h5prov_format::FORMAT_VERSION;
                if m.format_version > supported && !opts.lenient {
                    return Err(Error::NewerFormat {
                        path: f.path.clone(),
                        found: m.format_version,
                        supported,
                    });
                }
                metas.push((source, m));
            }
            Err(MetaError::Unreadable(e)) => {
                stats.bad_metas.push((source, e.clone()));
                row.meta_error = Some(("unreadable", e));
            }
            Err(MetaError::WrongType(e)) => {
                stats.bad_metas.push((source, e.clone()));
                row.meta_error = Some(("wrong_type", e));
            }
        }
        progress(f.size);
        file_rows.push(row);
    }
    let mut files: Vec<(&InputFile, Encoding, bool)> = Vec::new();
    files.extend(inputs.traces.iter().map(|(f, e)| (f, *e, true)));
    files.extend(inputs.objects.iter().map(|(f, e)| (f, *e, false)));
    let n = rayon::current_num_threads().clamp(1, files.len().max(1));
    let shares = assign(files, n);
    let results: Vec<_> = {
        use rayon::prelude::*;
        shares
            .par_iter()
            .enumerate()
            .with_max_len(1)
            .map(|(i, share)| worker(i, share, tmp, opts, progress))
            .collect()
    };
    let mut err = None;
    for (rows, nrec, nobj, e) in results {
        if let Some(e) = e {
            keep_first_error(&mut err, e);
        }
        stats.records += nrec;
        stats.objects += nobj;
        file_rows.extend(rows);
    }
    if let Some(e) = err {
        return Err(e);
    }
    commit::step("records-written");
    if !inputs.streams.is_empty() {
        stats.records += export_capture(tmp, inputs, opts, &mut file_rows, &mut metas)?;
        progress(inputs.streams.iter().map(|f| f.size).sum());
    }
    file_rows.sort_by(|a, b| (&a.source, a.role).cmp(&(&b.source, b.role)));
    for r in &file_rows {
        if let Some(l) = r.diag.truncated_line {
            stats.truncated.push((r.source.clone(), l));
        }
        stats.malformed_rows += r.diag.malformed;
        if let Some((l, why)) = &r.diag.first_malformed {
            if stats.first_malformed.is_none() {
                stats.first_malformed = Some((r.source.clone(), *l, why.clone()));
            }
        }
    }
    finish_unclosed(&mut metas, &file_rows);
    stats.files = file_rows.len() as u64;
    stats.processes = metas.len() as u64;
    write_processes(&tmp.join("processes").join("part-0.parquet"), &metas)?;
    write_files(&tmp.join("files").join("part-0.parquet"), &file_rows)?;
    Ok(stats)
}

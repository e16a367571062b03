//! Reading one job of a Parquet export into an [`Aggregate`], as if its files were read:
//! every file's rows go through the same [`Accumulator`] entry points with the same
//! [`FileDiag`], so `h5prov report` of an export gives the report of the traces.

use super::schema::{MetaKind, LINE, PROCESS_COLUMNS, SOURCE, TABLES};
use crate::aggregate::{Accumulator, Aggregate};
use crate::read::objects::{meta_from_json, MetaError};
use crate::read::{Error, FileDiag, ReadOptions};
use arrow_array::{
    Array, BooleanArray, Int32Array, Int64Array, ListArray, RecordBatch, StringArray,
};
use h5prov_format::{
    ColumnKind, FieldSource, ObjectSummaryRef, TraceRecordRef, OBJECT_COLUMNS, TRACE_COLUMNS,
};
use parquet::arrow::arrow_reader::{ParquetRecordBatchReader, ParquetRecordBatchReaderBuilder};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn pq_err(path: &Path, e: impl std::fmt::Display) -> Error {
    Error::Other(format!("{}: reading Parquet: {e}", path.display()))
}

/// The jobs of an export: the `job=<id>` partitions of its tables, sorted.
pub fn jobs(dir: &Path) -> Result<Vec<String>, Error> {
    let mut out = BTreeSet::new();
    for t in TABLES {
        let d = dir.join(t);
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd {
            let e = e.map_err(|e| Error::io(&d, e))?;
            if let Some(j) = e.file_name().to_str().and_then(|n| n.strip_prefix("job=")) {
                out.insert(j.to_string());
            }
        }
    }
    // Committed, but its export was killed before moving every table.
    out.extend(super::commit::pending_jobs(dir));
    Ok(out.into_iter().collect())
}

/// The job to read: `job` if given (it must be in the export), else the export's only one.
pub fn pick_job(dir: &Path, job: Option<&str>) -> Result<String, Error> {
    let all = jobs(dir)?;
    match job {
        Some(j) if all.iter().any(|x| x == j) => Ok(j.to_string()),
        Some(j) => Err(Error::Other(format!(
            "{}: no job {j} in this Parquet export (its jobs: {})",
            dir.display(),
            if all.is_empty() {
                "none".into()
            } else {
                all.join(", ")
            }
        ))),
        None => match all.as_slice() {
            [one] => Ok(one.clone()),
            [] => Err(Error::Other(format!(
                "{}: a Parquet export with no job in it",
                dir.display()
            ))),
            many => Err(Error::Other(format!(
                "{}: this Parquet export holds {} jobs ({}): pick one with --job ID",
                dir.display(),
                many.len(),
                many.join(", ")
            ))),
        },
    }
}

/// The Parquet files of one table partition, sorted, with their sizes.
fn part_files(dir: &Path, table: &str, job: &str) -> Result<Vec<(PathBuf, u64)>, Error> {
    let d = super::commit::partition_dir(dir, table, job);
    let mut out = Vec::new();
    let rd = match std::fs::read_dir(&d) {
        Ok(rd) => rd,
        // A job may lack a table (written by another tool): nothing in it.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(out),
        Err(e) => return Err(Error::io(&d, e)),
    };
    for e in rd {
        let e = e.map_err(|e| Error::io(&d, e))?;
        let p = e.path();
        let name = e.file_name();
        let name = name.to_string_lossy();
        // Like Spark and pyarrow: files starting with `.` or `_` are not data.
        if name.ends_with(".parquet") && !name.starts_with(['.', '_']) {
            let len = e.metadata().map_err(|e| Error::io(&p, e))?.len();
            out.push((p, len));
        }
    }
    out.sort();
    Ok(out)
}

/// Bytes of the Parquet files of job `job` (for progress).
pub fn job_bytes(dir: &Path, job: &str) -> u64 {
    TABLES
        .iter()
        .filter_map(|t| part_files(dir, t, job).ok())
        .flatten()
        .map(|(_, n)| n)
        .sum()
}

fn open(path: &Path) -> Result<ParquetRecordBatchReader, Error> {
    let f = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    ParquetRecordBatchReaderBuilder::try_new(f)
        .and_then(|b| b.with_batch_size(64 * 1024).build())
        .map_err(|e| pq_err(path, e))
}

fn read_all(path: &Path) -> Result<Vec<RecordBatch>, Error> {
    open(path)?
        .map(|b| b.map_err(|e| pq_err(path, e)))
        .collect()
}

fn column<'a, T: 'static>(
    b: &'a RecordBatch,
    name: &str,
    path: &Path,
) -> Result<Option<&'a T>, Error> {
    match b.column_by_name(name) {
        None => Ok(None),
        Some(a) => a.as_any().downcast_ref::<T>().map(Some).ok_or_else(|| {
            Error::Other(format!(
                "{}: column `{name}` has type {}, not the export's",
                path.display(),
                a.data_type()
            ))
        }),
    }
}

fn required<'a, T: 'static>(b: &'a RecordBatch, name: &str, path: &Path) -> Result<&'a T, Error> {
    column(b, name, path)?.ok_or_else(|| {
        Error::Other(format!(
            "{}: no `{name}` column (not an h5prov Parquet export?)",
            path.display()
        ))
    })
}

/// One record-table column of a batch.
#[derive(Clone, Copy)]
enum ColRef<'a> {
    I64(&'a Int64Array),
    I32(&'a Int32Array),
    Text(&'a StringArray),
}

/// A batch's columns in table order (`None`: the file lacks the column).
fn table_cols<'a>(
    b: &'a RecordBatch,
    columns: &[&str],
    kinds: &[ColumnKind],
    required: &[bool],
    path: &Path,
) -> Result<Vec<Option<ColRef<'a>>>, Error> {
    let mut out = Vec::with_capacity(columns.len());
    for ((c, k), req) in columns.iter().zip(kinds).zip(required) {
        let r = match super::schema::arrow_type(*k) {
            arrow_schema::DataType::Int64 => column::<Int64Array>(b, c, path)?.map(ColRef::I64),
            arrow_schema::DataType::Int32 => column::<Int32Array>(b, c, path)?.map(ColRef::I32),
            _ => column::<StringArray>(b, c, path)?.map(ColRef::Text),
        };
        if r.is_none() && *req {
            return Err(Error::Other(format!(
                "{}: no `{c}` column (not an h5prov Parquet export?)",
                path.display()
            )));
        }
        out.push(r);
    }
    Ok(out)
}

/// One row of a batch as a [`FieldSource`]: the format's one parser reads it.
struct RowSource<'c, 'a> {
    cols: &'c [Option<ColRef<'a>>],
    row: usize,
}

impl<'a> FieldSource<'a> for RowSource<'_, 'a> {
    type Error = String;

    #[inline]
    fn unsigned(&self, col: usize, name: &'static str, empty: u64) -> Result<u64, String> {
        let r = self.row;
        match self.cols[col] {
            None => Ok(empty),
            Some(ColRef::I64(a)) if a.is_null(r) => Ok(empty),
            // Bit for bit (see `schema::arrow_type`).
            Some(ColRef::I64(a)) => Ok(a.value(r) as u64),
            Some(ColRef::I32(a)) if a.is_null(r) => Ok(empty),
            Some(ColRef::I32(a)) => {
                u64::try_from(a.value(r)).map_err(|_| format!("column `{name}`: negative"))
            }
            Some(ColRef::Text(_)) => Err(format!("column `{name}`: text, not a number")),
        }
    }

    #[inline]
    fn signed(&self, col: usize, name: &'static str, empty: i64) -> Result<i64, String> {
        let r = self.row;
        match self.cols[col] {
            None => Ok(empty),
            Some(ColRef::I64(a)) if a.is_null(r) => Ok(empty),
            Some(ColRef::I64(a)) => Ok(a.value(r)),
            Some(ColRef::I32(a)) if a.is_null(r) => Ok(empty),
            Some(ColRef::I32(a)) => Ok(i64::from(a.value(r))),
            Some(ColRef::Text(_)) => Err(format!("column `{name}`: text, not a number")),
        }
    }

    #[inline]
    fn text(&self, col: usize, name: &'static str) -> Result<&'a str, String> {
        match self.cols[col] {
            None => Ok(""),
            Some(ColRef::Text(a)) if a.is_null(self.row) => Ok(""),
            Some(ColRef::Text(a)) => Ok(a.value(self.row)),
            Some(_) => Err(format!("column `{name}`: a number, not text")),
        }
    }

    fn out_of_range(&self, _col: usize, name: &'static str) -> String {
        format!("column `{name}`: out of range")
    }

    fn empty_value(&self, _col: usize, name: &'static str) -> String {
        format!("column `{name}` is empty")
    }
}

/// A Parquet file read batch by batch, with a current row.
struct Cursor {
    path: PathBuf,
    reader: ParquetRecordBatchReader,
    batch: Option<RecordBatch>,
    row: usize,
    /// Rows of the batches before the current one.
    base: u64,
}

impl Cursor {
    fn open(path: &Path) -> Result<Cursor, Error> {
        Ok(Cursor {
            path: path.to_path_buf(),
            reader: open(path)?,
            batch: None,
            row: 0,
            base: 0,
        })
    }

    /// The current batch, moving to the next one when this one is done; `None` at the end.
    fn batch(&mut self) -> Result<Option<RecordBatch>, Error> {
        loop {
            if let Some(b) = &self.batch {
                if self.row < b.num_rows() {
                    return Ok(Some(b.clone()));
                }
                self.base += b.num_rows() as u64;
            }
            self.row = 0;
            match self.reader.next() {
                None => {
                    self.batch = None;
                    return Ok(None);
                }
                Some(Err(e)) => return Err(pq_err(&self.path, e)),
                Some(Ok(b)) => self.batch = Some(b),
            }
        }
    }

    fn malformed(&self, row: usize, reason: String) -> Error {
        Error::Malformed {
            path: self.path.clone(),
            // The row's number in the Parquet file, 1-based.
            line: self.base + row as u64 + 1,
            reason,
        }
    }

    /// The source of the current row.
    fn source(&mut self) -> Result<Option<String>, Error> {
        let Some(b) = self.batch()? else {
            return Ok(None);
        };
        let s = required::<StringArray>(&b, SOURCE, &self.path)?;
        Ok(Some(s.value(self.row).to_string()))
    }
}

/// Per source of rows, what reading it found, and whether it is a streamed process.
type Diags = BTreeMap<String, (FileDiag, bool)>;

fn diag_of(files: &Diags, source: &str, path: &Path) -> Result<(FileDiag, bool), Error> {
    files.get(source).cloned().ok_or_else(|| {
        Error::Other(format!(
            "{}: rows of {source}, which the export's `files` table does not list",
            path.display()
        ))
    })
}

/// Reads one `records` Parquet file into `acc`; returns the sources it held.
fn read_records(
    acc: &mut Accumulator,
    path: &Path,
    files: &Diags,
) -> Result<BTreeSet<String>, Error> {
    let mut cur = Cursor::open(path)?;
    let mut seen = BTreeSet::new();
    while let Some(source) = cur.source()? {
        let (diag, streamed) = diag_of(files, &source, path)?;
        let read = |b: &mut crate::aggregate::Builder<'_>| {
            while let Some(batch) = cur.batch()? {
                let cols = table_cols(
                    &batch,
                    TRACE_COLUMNS,
                    TraceRecordRef::KINDS,
                    TraceRecordRef::REQUIRED,
                    path,
                )?;
                let src = required::<StringArray>(&batch, SOURCE, path)?;
                let line = required::<Int64Array>(&batch, LINE, path)?;
                let mut row = cur.row;
                while row < batch.num_rows() && src.value(row) == source {
                    let s = RowSource { cols: &cols, row };
                    let r = TraceRecordRef::from_source(&s).map_err(|e| cur.malformed(row, e))?;
                    b.add(line.value(row) as u64, &r);
                    row += 1;
                }
                cur.row = row;
                if row < batch.num_rows() {
                    break; // the next file's rows
                }
            }
            Ok(diag)
        };
        if streamed {
            acc.add_stream_records_with(Path::new(&source), read)?;
        } else {
            acc.add_trace_with(Path::new(&source), read)?;
        }
        seen.insert(source);
    }
    Ok(seen)
}

/// Reads one `objects` Parquet file: for each source (the objects file its rows came
/// from), in order, `per_source(source, rows)`, where `rows(sink)` hands each of that
/// source's rows to `sink`. Returns the sources it held.
fn each_source_objects(
    path: &Path,
    mut per_source: impl FnMut(&str, RowsOf<'_>) -> Result<(), Error>,
) -> Result<BTreeSet<String>, Error> {
    let mut cur = Cursor::open(path)?;
    let mut seen = BTreeSet::new();
    while let Some(source) = cur.source()? {
        let mut rows = |sink: &mut dyn FnMut(&ObjectSummaryRef<'_>)| -> Result<(), Error> {
            while let Some(batch) = cur.batch()? {
                let cols = table_cols(
                    &batch,
                    OBJECT_COLUMNS,
                    ObjectSummaryRef::KINDS,
                    ObjectSummaryRef::REQUIRED,
                    path,
                )?;
                let src = required::<StringArray>(&batch, SOURCE, path)?;
                let mut row = cur.row;
                while row < batch.num_rows() && src.value(row) == source {
                    let s = RowSource { cols: &cols, row };
                    let r = ObjectSummaryRef::from_source(&s).map_err(|e| cur.malformed(row, e))?;
                    sink(&r);
                    row += 1;
                }
                cur.row = row;
                if row < batch.num_rows() {
                    break;
                }
            }
            Ok(())
        };
        per_source(&source, &mut rows)?;
        seen.insert(source);
    }
    Ok(seen)
}

/// What [`each_source_objects`] hands over for one source: a reader of its rows.
type RowsOf<'a> = &'a mut dyn FnMut(&mut dyn FnMut(&ObjectSummaryRef<'_>)) -> Result<(), Error>;

/// Reads one `objects` Parquet file into `acc`; returns the sources it held.
fn read_objects(
    acc: &mut Accumulator,
    path: &Path,
    files: &Diags,
) -> Result<BTreeSet<String>, Error> {
    each_source_objects(path, |source, rows| {
        let (diag, _) = diag_of(files, source, path)?;
        acc.add_objects_with(Path::new(source), |sink| {
            rows(sink)?;
            Ok(diag)
        })
    })
}

/// For provenance ([`crate::export::prov`]): the processes of job `job` of the export `dir`, each
/// as the source path of its meta file and the meta, and each objects row with the source
/// path of the objects file it came from (`each(source, row)`), read as [`load`] reads
/// them.
pub fn lineage_rows(
    dir: &Path,
    job: &str,
    each: &mut dyn FnMut(&str, &ObjectSummaryRef<'_>),
) -> Result<Vec<(String, h5prov_format::ProcessMeta)>, Error> {
    let mut metas = Vec::new();
    for (source, v) in read_processes(dir, job)? {
        let m = meta_from_json(&v).map_err(|e| {
            Error::Other(format!(
                "{}: the processes row of {source}: {e}",
                dir.display()
            ))
        })?;
        metas.push((source, m));
    }
    for (p, _) in part_files(dir, "objects", job)? {
        each_source_objects(&p, |source, rows| rows(&mut |o| each(source, o)))?;
    }
    Ok(metas)
}

/// One `files` row.
struct FileRow {
    source: String,
    role: String,
    diag: FileDiag,
    meta_error: Option<MetaError>,
}

fn read_files(dir: &Path, job: &str) -> Result<Vec<FileRow>, Error> {
    let mut out = Vec::new();
    for (path, _) in part_files(dir, "files", job)? {
        for b in read_all(&path)? {
            let p = &path;
            let source = required::<StringArray>(&b, SOURCE, p)?;
            let role = required::<StringArray>(&b, "role", p)?;
            let rows = required::<Int64Array>(&b, "rows", p)?;
            let data_bytes = required::<Int64Array>(&b, "data_bytes", p)?;
            let trunc = required::<Int64Array>(&b, "truncated_line", p)?;
            let malformed = required::<Int64Array>(&b, "malformed", p)?;
            let fm_line = required::<Int64Array>(&b, "first_malformed_line", p)?;
            let fm_reason = required::<StringArray>(&b, "first_malformed_reason", p)?;
            let me_kind = required::<StringArray>(&b, "meta_error_kind", p)?;
            let me = required::<StringArray>(&b, "meta_error", p)?;
            let opt = |a: &Int64Array, i: usize| (!a.is_null(i)).then(|| a.value(i) as u64);
            for i in 0..b.num_rows() {
                let meta_error = (!me_kind.is_null(i)).then(|| {
                    let why = me.value(i).to_string();
                    if me_kind.value(i) == "wrong_type" {
                        MetaError::WrongType(why)
                    } else {
                        MetaError::Unreadable(why)
                    }
                });
                out.push(FileRow {
                    source: source.value(i).to_string(),
                    role: role.value(i).to_string(),
                    diag: FileDiag {
                        rows: rows.value(i) as u64,
                        truncated_line: opt(trunc, i),
                        malformed: malformed.value(i) as u64,
                        first_malformed: opt(fm_line, i)
                            .map(|l| (l, fm_reason.value(i).to_string())),
                        data_bytes: data_bytes.value(i) as u64,
                        // An export holds the records, not where they were read from.
                        recovered: false,
                    },
                    meta_error,
                });
            }
        }
    }
    Ok(out)
}

/// The `processes` rows as meta documents, by meta file.
fn read_processes(dir: &Path, job: &str) -> Result<BTreeMap<String, serde_json::Value>, Error> {
    use serde_json::Value;
    let mut out = BTreeMap::new();
    for (path, _) in part_files(dir, "processes", job)? {
        for b in read_all(&path)? {
            let p = &path;
            let source = required::<StringArray>(&b, SOURCE, p)?;
            let mut docs: Vec<serde_json::Map<String, Value>> =
                vec![serde_json::Map::new(); b.num_rows()];
            for (c, k) in PROCESS_COLUMNS {
                // A column the export lacks (an older export) is a key the meta lacks.
                let Some(a) = b.column_by_name(c) else {
                    continue;
                };
                let bad = || {
                    Error::Other(format!(
                        "{}: column `{c}` has type {}, not the export's",
                        p.display(),
                        a.data_type()
                    ))
                };
                for (i, d) in docs.iter_mut().enumerate() {
                    let v = if a.is_null(i) {
                        Value::Null
                    } else {
                        match k {
                            MetaKind::Unsigned | MetaKind::OptUnsigned => {
                                let x = a.as_any().downcast_ref::<Int64Array>().ok_or_else(bad)?;
                                Value::from(x.value(i) as u64)
                            }
                            MetaKind::Signed => {
                                let x = a.as_any().downcast_ref::<Int64Array>().ok_or_else(bad)?;
                                Value::from(x.value(i))
                            }
                            MetaKind::Text => {
                                let x = a.as_any().downcast_ref::<StringArray>().ok_or_else(bad)?;
                                Value::from(x.value(i))
                            }
                            MetaKind::TextList => {
                                let x = a.as_any().downcast_ref::<ListArray>().ok_or_else(bad)?;
                                let l = x.value(i);
                                let s = l.as_any().downcast_ref::<StringArray>().ok_or_else(bad)?;
                                Value::from(
                                    (0..s.len())
                                        .map(|j| s.value(j).to_string())
                                        .collect::<Vec<_>>(),
                                )
                            }
                            MetaKind::Bool => {
                                let x =
                                    a.as_any().downcast_ref::<BooleanArray>().ok_or_else(bad)?;
                                Value::from(x.value(i))
                            }
                        }
                    };
                    d.insert(c.to_string(), v);
                }
            }
            // `incomplete` is derived from `end_ns`: not read back.
            for (i, d) in docs.into_iter().enumerate() {
                out.insert(source.value(i).to_string(), Value::Object(d));
            }
        }
    }
    Ok(out)
}

/// Reads job `job` of the export `dir` (see [`pick_job`]) into an [`Aggregate`] on the
/// current rayon pool: the same aggregate as reading the job's files, so the same report.
/// `progress` receives the size of each Parquet file as it finishes.
pub fn load(
    dir: &Path,
    job: &str,
    opts: &ReadOptions,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Aggregate, Error> {
    use rayon::prelude::*;
    let files = read_files(dir, job)?;
    let procs = read_processes(dir, job)?;
    let mut diags: Diags = BTreeMap::new();
    let mut acc = Accumulator::default();
    for f in &files {
        if f.role == "capture" {
            acc.add_stream_file(Path::new(&f.source), &f.diag);
        } else if f.role == "meta" {
            let m = match &f.meta_error {
                Some(e) => Err(e.clone()),
                None => match procs.get(&f.source) {
                    Some(v) => meta_from_json(v),
                    None => Err(MetaError::Unreadable(
                        "not in the Parquet export's processes table".into(),
                    )),
                },
            };
            acc.add_meta_read(Path::new(&f.source), m, opts)?;
        } else {
            diags.insert(f.source.clone(), (f.diag.clone(), f.role == "stream"));
        }
    }
    let mut parts: Vec<(PathBuf, u64, bool)> = Vec::new();
    for (p, n) in part_files(dir, "records", job)? {
        parts.push((p, n, true));
    }
    for (p, n) in part_files(dir, "objects", job)? {
        parts.push((p, n, false));
    }
    for t in ["processes", "files"] {
        for (_, n) in part_files(dir, t, job)? {
            progress(n);
        }
    }
    // One accumulator per part, all on the same object tables.
    let handles: Vec<Accumulator> = parts.iter().map(|_| acc.sharing()).collect();
    let results: Vec<Result<(Accumulator, BTreeSet<String>), Error>> = parts
        .par_iter()
        .zip(handles)
        .with_max_len(1)
        .map(|((p, n, is_records), mut a)| {
            let seen = if *is_records {
                read_records(&mut a, p, &diags)?
            } else {
                read_objects(&mut a, p, &diags)?
            };
            progress(*n);
            Ok((a, seen))
        })
        .collect();
    let mut accs = Vec::with_capacity(results.len() + 1);
    let mut seen = BTreeSet::new();
    let mut err: Option<Error> = None;
    for r in results {
        match r {
            Ok((a, s)) => {
                accs.push(a);
                seen.extend(s);
            }
            Err(e) => {
                err = Some(match err.take() {
                    Some(a) if a.sort_key() <= e.sort_key() => a,
                    _ => e,
                })
            }
        }
    }
    if let Some(e) = err {
        return Err(e);
    }
    // Files without rows (an empty trace, an objects file with only its header).
    for f in &files {
        if !matches!(f.role.as_str(), "meta" | "capture") && !seen.contains(&f.source) {
            let d = f.diag.clone();
            if f.role == "stream" {
                acc.add_stream_records_with(Path::new(&f.source), |_| Ok(d))?;
            } else if f.role == "trace" {
                acc.add_trace_with(Path::new(&f.source), |_| Ok(d))?;
            } else {
                acc.add_objects_with(Path::new(&f.source), |_| Ok(d))?;
            }
        }
    }
    accs.push(acc);
    Ok(Accumulator::finish_all(accs))
}

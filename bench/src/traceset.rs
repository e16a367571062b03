//! The analyzer benchmark's input: real h5prov traces, replicated into many process files.
//!
//! Two steps, each cached under the analyzer work directory:
//!
//! 1. **Source**: `metadata_heavy` (at `level=dataset`) and `vpic_write` (at `level=element`)
//!    run through the real `libh5prov.so`, a few processes each, sized so every process
//!    writes at least as many records as one output file needs. Only their trace
//!    directories are kept (`source/<workload>/`).
//! 2. **Set**: output file `i` of `F` is the first `N/F` rows of source process
//!    `i mod S` (sources alternate between the two workloads), copied byte for byte except
//!    the `rank` and `pid` columns, which become `i` and [`PID_BASE`]` + i`. The process's
//!    `.objects.csv` is copied with the same rewrite, keeping the rows of the objects
//!    (`kind`, `file`, `path`) that the copied records touch and that start (`first_ns`)
//!    before the last copied record ends (at 4096 files a file holds a few thousand
//!    records, not the whole source run), and its `.meta.json` with `rank`,
//!    `pid` and `world_size` (= `F`) set; the files are named
//!    `h5prov-r<i>-p<pid>.{trace.csv,objects.csv,meta.json}`. No row is repeated and no
//!    other field is made up, so the analyzer sees `F` distinct ranks of real records.
//!
//! A set is reused when its manifest names the same record and file counts, generator
//! version and source (plugin content hash and workload sizes) and its files are intact.

use std::collections::{HashMap, HashSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::config::{Format, Level, Mode, Settings, Sizes, Workload};
use crate::proc::{run_group, Launch};
use crate::BenchError;

/// Version of the generator; a cached source or set written by another version is rebuilt.
pub const GENERATOR_VERSION: u32 = 3;

/// The pid written for output file `i` is `PID_BASE + i` (real pids are kept nowhere, so
/// two copies of one source process do not look like the same process).
pub const PID_BASE: u32 = 100_000;

/// Most processes run per source workload.
const MAX_SOURCE_PROCS: usize = 4;

/// `vpic_write -p`: particles per process in the source run (many small timesteps give
/// many records; 1 KiB per write).
const VPIC_PARTICLES: u64 = 256;

/// One source workload: what was run through h5prov and what each process wrote.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceRun {
    /// Workload name (`metadata-heavy`, `vpic-write`).
    pub workload: String,
    /// h5prov `level=`.
    pub level: String,
    /// Processes (ranks 0..procs).
    pub procs: usize,
    /// The workload's arguments apart from `-d DIR`.
    pub args: Vec<String>,
    /// Trace file stems (`h5prov-r<rank>-p<pid>`) by rank, relative to `source/<workload>/`.
    pub stems: Vec<String>,
    /// Trace records of each process, by rank.
    pub records: Vec<u64>,
}

/// `source/manifest.json`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceManifest {
    /// [`GENERATOR_VERSION`].
    pub generator: u32,
    /// FNV-1a 64 of the `libh5prov.so` that wrote the traces, hex.
    pub plugin_fnv1a: String,
    /// The runs.
    pub runs: Vec<SourceRun>,
}

impl SourceManifest {
    /// A key naming this source exactly (hash of its manifest).
    pub fn key(&self) -> String {
        let json = serde_json::to_string(self).unwrap_or_default();
        format!("{:016x}", fnv1a(json.as_bytes()))
    }

    /// Smallest record count of any process.
    pub fn min_records(&self) -> u64 {
        self.runs
            .iter()
            .flat_map(|r| r.records.iter().copied())
            .min()
            .unwrap_or(0)
    }

    /// Source processes in the order output files use them: rank 0 of every workload,
    /// then rank 1, ...: `(run index, rank)`.
    pub fn order(&self) -> Vec<(usize, usize)> {
        let procs = self.runs.iter().map(|r| r.procs).max().unwrap_or(0);
        let mut v = Vec::new();
        for p in 0..procs {
            for (i, r) in self.runs.iter().enumerate() {
                if p < r.procs {
                    v.push((i, p));
                }
            }
        }
        v
    }
}

/// One output process file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SetFile {
    /// Stem of the output files (`h5prov-r<i>-p<pid>`).
    pub stem: String,
    /// Source: `<workload>/<stem>`.
    pub source: String,
    /// Records copied (the first rows of the source trace).
    pub records: u64,
}

/// `set-r<N>-f<F>/manifest.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SetManifest {
    /// [`GENERATOR_VERSION`].
    pub generator: u32,
    /// Trace records in all files.
    pub records: u64,
    /// Process files.
    pub files: usize,
    /// [`SourceManifest::key`] of the source the set was copied from.
    pub source_key: String,
    /// The source itself.
    pub source: SourceManifest,
    /// Bytes of all files of the set (traces, objects, meta; not the manifest).
    pub bytes: u64,
    /// Bytes of the `.trace.csv` files.
    pub trace_bytes: u64,
    /// Per output file.
    pub per_file: Vec<SetFile>,
    /// Seconds it took to copy the set (not counting the source runs).
    pub copy_s: f64,
}

/// A trace set ready to be analyzed.
#[derive(Clone, Debug)]
pub struct TraceSet {
    /// Directory holding the `3 × files` files (and `manifest.json`).
    pub dir: PathBuf,
    /// Its manifest.
    pub manifest: SetManifest,
    /// Taken from the cache (nothing was run or copied).
    pub cached: bool,
    /// The source traces were taken from the cache.
    pub source_cached: bool,
    /// Seconds spent on this call (source runs plus copy; ~0 when cached).
    pub prepare_s: f64,
}

/// What [`ensure`] needs.
#[derive(Clone, Debug)]
pub struct SetSpec {
    /// Repository root (for `workloads/build.sh`).
    pub repo: PathBuf,
    /// The analyzer work directory (`target/bench-work/analyzer`).
    pub work_dir: PathBuf,
    /// Directory holding `libh5prov.so`.
    pub plugin_path: PathBuf,
    /// Trace records in total.
    pub records: u64,
    /// Process files.
    pub files: usize,
    /// Ignore the caches.
    pub regenerate: bool,
}

/// FNV-1a, 64 bit.
pub fn fnv1a(data: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in data {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

pub(crate) fn read_json<T: for<'de> Deserialize<'de>>(path: &Path) -> Option<T> {
    serde_json::from_slice(&fs::read(path).ok()?).ok()
}

fn write_json<T: Serialize>(path: &Path, v: &T) -> Result<(), BenchError> {
    let s = serde_json::to_string_pretty(v)
        .map_err(|e| BenchError::new(format!("cannot serialise {}: {e}", path.display())))?;
    fs::write(path, s + "\n")?;
    Ok(())
}

pub(crate) fn ctx(path: &Path) -> impl Fn(std::io::Error) -> BenchError + '_ {
    move |e| BenchError::new(format!("{}: {e}", path.display()))
}

/// Records of output file `i`: `records / files`, the first `records % files` files one more.
pub fn quota(records: u64, files: usize, i: usize) -> u64 {
    let f = files as u64;
    records / f + u64::from((i as u64) < records % f)
}

/// Returns the trace set for `spec`, from the cache or freshly made. `progress` gets one
/// line per step.
pub fn ensure(spec: &SetSpec, progress: &mut dyn FnMut(&str)) -> Result<TraceSet, BenchError> {
    let t0 = Instant::now();
    let (source_dir, source, source_cached) = ensure_source(spec, progress)?;
    let key = source.key();

    let set_dir = spec
        .work_dir
        .join(format!("set-r{}-f{}", spec.records, spec.files));
    if !spec.regenerate {
        if let Some(m) = read_json::<SetManifest>(&set_dir.join("manifest.json")) {
            if m.generator == GENERATOR_VERSION
                && m.records == spec.records
                && m.files == spec.files
                && m.source_key == key
                && set_intact(&set_dir, &m)
            {
                progress(&format!(
                    "[analyzer] trace set cached in {}",
                    set_dir.display()
                ));
                return Ok(TraceSet {
                    dir: set_dir,
                    manifest: m,
                    cached: true,
                    source_cached,
                    prepare_s: t0.elapsed().as_secs_f64(),
                });
            }
        }
    }
    remove_stale_sets(&spec.work_dir, &key)?;
    let manifest = make_set(spec, &source_dir, &source, &set_dir, progress)?;
    Ok(TraceSet {
        dir: set_dir,
        manifest,
        cached: false,
        source_cached,
        prepare_s: t0.elapsed().as_secs_f64(),
    })
}

/// The source traces for `spec` ([`SourceManifest`]), from the cache or freshly run:
/// `(source directory, manifest, taken from the cache)`. Each process of each source
/// workload has at least the records one of `spec.files` output files needs.
pub fn ensure_source(
    spec: &SetSpec,
    progress: &mut dyn FnMut(&str),
) -> Result<(PathBuf, SourceManifest, bool), BenchError> {
    if spec.files == 0 || spec.records < spec.files as u64 {
        return Err(BenchError::new(
            "--records must be at least --files, and --files at least 1",
        ));
    }
    let need = quota(spec.records, spec.files, 0);
    let procs = spec.files.div_ceil(2).clamp(1, MAX_SOURCE_PROCS);
    let plugin = spec.plugin_path.join("libh5prov.so");
    let plugin_bytes = fs::read(&plugin).map_err(|e| {
        BenchError::new(format!(
            "{}: {e} (build the connector: cargo build --release -p h5prov, and copy it there, \
             or pass --plugin-path)",
            plugin.display()
        ))
    })?;
    let plugin_fnv1a = format!("{:016x}", fnv1a(&plugin_bytes));
    drop(plugin_bytes);

    let source_dir = spec.work_dir.join("source");
    let cached_source =
        read_json::<SourceManifest>(&source_dir.join("manifest.json")).filter(|m| {
            !spec.regenerate
                && m.generator == GENERATOR_VERSION
                && m.plugin_fnv1a == plugin_fnv1a
                && m.runs.len() == 2
                && m.runs.iter().all(|r| r.procs >= procs)
                && m.min_records() >= need
        });
    let source_cached = cached_source.is_some();
    let source = match cached_source {
        Some(m) => {
            progress(&format!(
                "[analyzer] source traces cached in {}",
                source_dir.display()
            ));
            m
        }
        None => make_source(spec, &source_dir, &plugin_fnv1a, need, procs, progress)?,
    };
    Ok((source_dir, source, source_cached))
}

/// The files of the set exist with the sizes the manifest adds up to.
fn set_intact(dir: &Path, m: &SetManifest) -> bool {
    let mut bytes = 0;
    for f in &m.per_file {
        for ext in ["trace.csv", "objects.csv", "meta.json"] {
            match fs::metadata(dir.join(format!("{}.{ext}", f.stem))) {
                Ok(md) => bytes += md.len(),
                Err(_) => return false,
            }
        }
    }
    let entries = fs::read_dir(dir).map(|d| d.count()).unwrap_or(0);
    bytes == m.bytes && entries == 3 * m.files + 1
}

/// Removes `set-*` directories copied from another source (they can never be reused) and
/// unfinished ones.
fn remove_stale_sets(work_dir: &Path, key: &str) -> Result<(), BenchError> {
    let Ok(rd) = fs::read_dir(work_dir) else {
        return Ok(());
    };
    for e in rd {
        let e = e?;
        let name = e.file_name().to_string_lossy().into_owned();
        if !name.starts_with("set-") || !e.file_type()?.is_dir() {
            continue;
        }
        let keep = !name.contains(".tmp")
            && read_json::<SetManifest>(&e.path().join("manifest.json"))
                .is_some_and(|m| m.source_key == key && m.generator == GENERATOR_VERSION);
        if !keep {
            fs::remove_dir_all(e.path()).map_err(ctx(&e.path()))?;
        }
    }
    Ok(())
}

/// Runs the two source workloads through h5prov (rerunning bigger when a process wrote
/// fewer than `need` records) and writes `source/manifest.json`.
fn make_source(
    spec: &SetSpec,
    source_dir: &Path,
    plugin_fnv1a: &str,
    need: u64,
    procs: usize,
    progress: &mut dyn FnMut(&str),
) -> Result<SourceManifest, BenchError> {
    let scratch = spec.work_dir.join("scratch");
    let settings = Settings {
        repo: spec.repo.clone(),
        bin_dir: spec.work_dir.join("bin"),
        work_dir: scratch.clone(),
        out_dir: scratch.clone(),
        plugin_path: spec.work_dir.join("plugin"),
        baseline_plugin_path: None,
        modes: Vec::new(),
        workloads: Vec::new(),
        procs: vec![procs],
        rounds: 1,
        sizes: Sizes::QUICK,
        quick: false,
        callgrind: false,
        callgrind_iters: (0, 0),
        mpi: false,
        pin: None,
        collector: None,
    };
    progress("[analyzer] building workloads/ for the source traces");
    crate::runner::build_workloads(&settings)?;
    // A private copy: HDF5 dlopens every lib*.so of the plugin directory, and a rebuild of
    // the connector meanwhile must not change the binary under a running workload.
    fs::create_dir_all(&settings.plugin_path)?;
    let tmp = settings.plugin_path.join(".libh5prov.so.tmp");
    fs::copy(spec.plugin_path.join("libh5prov.so"), &tmp).map_err(ctx(&tmp))?;
    fs::rename(&tmp, settings.plugin_path.join("libh5prov.so"))?;
    if source_dir.exists() {
        fs::remove_dir_all(source_dir).map_err(ctx(source_dir))?;
    }
    fs::create_dir_all(source_dir)?;

    let mut runs = Vec::new();
    for (w, level, per_unit) in [
        (Workload::MetadataHeavy, Level::Dataset, 14u64),
        (Workload::VpicWrite, Level::Element, 26u64),
    ] {
        // Units (iterations or timesteps) for `need` records, with 5 % to spare.
        let mut units = need.div_ceil(per_unit) * 21 / 20 + 4;
        let mut attempt = 0;
        loop {
            attempt += 1;
            let args = match w {
                Workload::MetadataHeavy => vec!["-n".to_string(), units.to_string()],
                _ => vec![
                    "-p".to_string(),
                    VPIC_PARTICLES.to_string(),
                    "-t".to_string(),
                    units.to_string(),
                ],
            };
            let run = run_source(&settings, source_dir, w, level, procs, &args, progress)?;
            let min = run.records.iter().copied().min().unwrap_or(0);
            if min >= need {
                runs.push(run);
                break;
            }
            if attempt == 3 {
                return Err(BenchError::new(format!(
                    "{} {}: a process wrote {min} trace records, fewer than the {need} needed",
                    w.program(),
                    args.join(" ")
                )));
            }
            units = (units as f64 * need as f64 / min.max(1) as f64 * 1.05).ceil() as u64 + 4;
        }
    }
    fs::remove_dir_all(&scratch).map_err(ctx(&scratch))?;
    let m = SourceManifest {
        generator: GENERATOR_VERSION,
        plugin_fnv1a: plugin_fnv1a.to_string(),
        runs,
    };
    write_json(&source_dir.join("manifest.json"), &m)?;
    Ok(m)
}

/// One source workload: `procs` processes through h5prov at `level`, CSV traces into
/// `source_dir/<workload>/`; the HDF5 output is deleted.
fn run_source(
    settings: &Settings,
    source_dir: &Path,
    w: Workload,
    level: Level,
    procs: usize,
    args: &[String],
    progress: &mut dyn FnMut(&str),
) -> Result<SourceRun, BenchError> {
    let trace_dir = source_dir.join(w.name());
    let out_dir = settings.work_dir.join(w.name());
    for d in [&trace_dir, &out_dir] {
        if d.exists() {
            fs::remove_dir_all(d).map_err(ctx(d))?;
        }
        fs::create_dir_all(d)?;
    }
    let mode = Mode::h5prov(level, Format::Csv);
    let mut full_args = vec!["-d".to_string(), out_dir.display().to_string()];
    full_args.extend(args.iter().cloned());
    let launch = Launch {
        program: settings.program(w),
        args: full_args,
        env: mode.env(&settings.plugin_path, &trace_dir, None),
        procs,
        wrapper: Vec::new(),
        mpi: false,
    };
    let t0 = Instant::now();
    run_group(
        &launch,
        &settings.work_dir.join(format!("logs-{}", w.name())),
    )?;
    fs::remove_dir_all(&out_dir).map_err(ctx(&out_dir))?;
    crate::runner::check_trace(mode, &trace_dir)?;

    let mut found: Vec<(i64, String, u64)> = Vec::new();
    for e in fs::read_dir(&trace_dir)? {
        let name = e?.file_name().to_string_lossy().into_owned();
        let Some(stem) = name.strip_suffix(".trace.csv") else {
            continue;
        };
        let meta_path = trace_dir.join(format!("{stem}.meta.json"));
        let meta: serde_json::Value = read_json(&meta_path).ok_or_else(|| {
            BenchError::new(format!(
                "{}: missing or not JSON (the process did not finish?)",
                meta_path.display()
            ))
        })?;
        if meta["end_ns"].is_null() {
            return Err(BenchError::new(format!(
                "{}: end_ns is null, the process did not finish",
                meta_path.display()
            )));
        }
        if !trace_dir.join(format!("{stem}.objects.csv")).is_file() {
            return Err(BenchError::new(format!(
                "{}: no {stem}.objects.csv",
                trace_dir.display()
            )));
        }
        let rank = meta["rank"].as_i64().unwrap_or(-1);
        let data = fs::read(trace_dir.join(&name))?;
        if data.last() != Some(&b'\n') {
            return Err(BenchError::new(format!(
                "{}: the last row is unterminated",
                trace_dir.join(&name).display()
            )));
        }
        let rows = Records::new(&data).count() as u64;
        found.push((rank, stem.to_string(), rows.saturating_sub(1)));
    }
    found.sort();
    let ranks: Vec<i64> = found.iter().map(|f| f.0).collect();
    let expected: Vec<i64> = (0..procs as i64).collect();
    if ranks != expected {
        return Err(BenchError::new(format!(
            "{}: expected one trace per rank 0..{procs}, found ranks {ranks:?}",
            trace_dir.display()
        )));
    }
    let run = SourceRun {
        workload: w.name().to_string(),
        level: level.as_str().to_string(),
        procs,
        args: args.to_vec(),
        stems: found.iter().map(|f| f.1.clone()).collect(),
        records: found.iter().map(|f| f.2).collect(),
    };
    progress(&format!(
        "[analyzer] source {} level={} {} x{procs}: {:?} records per process, {:.1} s",
        w.program(),
        level.as_str(),
        args.join(" "),
        run.records,
        t0.elapsed().as_secs_f64()
    ));
    Ok(run)
}

/// The CSV records of `data` (without their `\n`): a newline inside double quotes does not
/// end a record. A last record without `\n` is returned too.
pub struct Records<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Records<'a> {
    /// Records of `data`.
    pub fn new(data: &'a [u8]) -> Self {
        Records { data, pos: 0 }
    }
}

impl<'a> Iterator for Records<'a> {
    type Item = &'a [u8];

    fn next(&mut self) -> Option<&'a [u8]> {
        let start = self.pos;
        if start >= self.data.len() {
            return None;
        }
        let mut quoted = false;
        for (i, &b) in self.data[start..].iter().enumerate() {
            match b {
                b'"' => quoted = !quoted,
                b'\n' if !quoted => {
                    self.pos = start + i + 1;
                    return Some(&self.data[start..start + i]);
                }
                _ => {}
            }
        }
        self.pos = self.data.len();
        Some(&self.data[start..])
    }
}

/// Byte ranges of the fields of one CSV record (commas inside double quotes do not split).
pub fn fields(rec: &[u8], out: &mut Vec<(usize, usize)>) {
    out.clear();
    let mut quoted = false;
    let mut start = 0;
    for (i, &b) in rec.iter().enumerate() {
        match b {
            b'"' => quoted = !quoted,
            b',' if !quoted => {
                out.push((start, i));
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push((start, rec.len()));
}

/// Copies CSV text, replacing the fields `rank_col` and `rank_col + 1` (rank and pid) of
/// every row after the header; every other byte is copied as is. At most `max_rows` rows.
/// Fails when a row has no such columns or they are not numbers (the layout is not what
/// the header said).
pub fn rewrite_identity(
    data: &[u8],
    rank_col: usize,
    rank: i64,
    pid: u32,
    max_rows: u64,
    out: &mut Vec<u8>,
) -> Result<u64, String> {
    rewrite_rows(data, rank_col, rank, pid, max_rows, out, |_, _| true)
}

/// [`rewrite_identity`] of the rows `keep` accepts (called with the row and its fields'
/// byte ranges; rows it refuses are neither copied nor counted).
pub fn rewrite_rows(
    data: &[u8],
    rank_col: usize,
    rank: i64,
    pid: u32,
    max_rows: u64,
    out: &mut Vec<u8>,
    mut keep: impl FnMut(&[u8], &[(usize, usize)]) -> bool,
) -> Result<u64, String> {
    let mut recs = Records::new(data);
    let header = recs.next().ok_or("empty file")?;
    out.extend_from_slice(header);
    out.push(b'\n');
    let rank_s = rank.to_string();
    let pid_s = pid.to_string();
    let mut f = Vec::with_capacity(32);
    let mut rows = 0;
    for rec in recs {
        if rows == max_rows {
            break;
        }
        fields(rec, &mut f);
        let (Some(&(rs, re)), Some(&(ps, pe))) = (f.get(rank_col), f.get(rank_col + 1)) else {
            return Err(format!("row {} has {} fields", rows + 1, f.len()));
        };
        let num = |s: usize, e: usize| {
            std::str::from_utf8(&rec[s..e])
                .ok()
                .and_then(|t| t.parse::<i64>().ok())
        };
        if num(rs, re).is_none() || num(ps, pe).is_none() {
            return Err(format!("row {}: rank/pid are not numbers", rows + 1));
        }
        if !keep(rec, &f) {
            continue;
        }
        out.extend_from_slice(&rec[..rs]);
        out.extend_from_slice(rank_s.as_bytes());
        out.push(b',');
        out.extend_from_slice(pid_s.as_bytes());
        out.extend_from_slice(&rec[pe..]);
        out.push(b'\n');
        rows += 1;
    }
    Ok(rows)
}

/// Index of column `name` of a CSV header.
pub(crate) fn column(data: &[u8], path: &Path, name: &[u8]) -> Result<usize, BenchError> {
    let header = Records::new(data).next().unwrap_or_default();
    let mut f = Vec::new();
    fields(header, &mut f);
    f.iter()
        .position(|&(s, e)| &header[s..e] == name)
        .ok_or_else(|| {
            BenchError::new(format!(
                "{}: the header has no {} column",
                path.display(),
                String::from_utf8_lossy(name)
            ))
        })
}

/// Indexes of the `kind`, `file` and `path` columns of a CSV header.
pub(crate) fn object_columns(data: &[u8], path: &Path) -> Result<[usize; 3], BenchError> {
    Ok([
        column(data, path, b"kind")?,
        column(data, path, b"file")?,
        column(data, path, b"path")?,
    ])
}

/// The `kind,file,path` bytes of a row (fields as [`fields`] found them).
pub(crate) fn object_key(rec: &[u8], f: &[(usize, usize)], cols: [usize; 3], key: &mut Vec<u8>) {
    key.clear();
    for c in cols {
        if let Some(&(s, e)) = f.get(c) {
            key.extend_from_slice(&rec[s..e]);
        }
        key.push(0);
    }
}

/// Index of the `rank` column, checking that `pid` follows it.
pub(crate) fn rank_column(data: &[u8], path: &Path) -> Result<usize, BenchError> {
    let header = Records::new(data).next().unwrap_or_default();
    let mut f = Vec::new();
    fields(header, &mut f);
    let names: Vec<&[u8]> = f.iter().map(|&(s, e)| &header[s..e]).collect();
    match names.iter().position(|n| *n == b"rank") {
        Some(i) if names.get(i + 1) == Some(&&b"pid"[..]) => Ok(i),
        _ => Err(BenchError::new(format!(
            "{}: the header has no rank,pid columns: {}",
            path.display(),
            String::from_utf8_lossy(header)
        ))),
    }
}

/// A source process's first records and the objects rows they touch: the text of a
/// trace file and of an objects file.
type Part = (Vec<u8>, Vec<u8>);

/// The first `want` records of source process `src` (its trace file's header and rows)
/// and the rows of its objects file whose object (`kind`, `file`, `path`) those records
/// touch and whose `first_ns` is before the end of the last of them, both with the
/// source's rank and pid.
fn source_part(src: &Path, want: u64) -> Result<Part, BenchError> {
    let mut touched: HashSet<Vec<u8>> = HashSet::new();
    let mut end_ns = 0u64;
    let mut key = Vec::new();
    let mut out = [Vec::new(), Vec::new()];
    for (k, ext) in ["trace.csv", "objects.csv"].into_iter().enumerate() {
        let name = src.file_name().unwrap_or_default().to_string_lossy();
        let from = src.with_file_name(format!("{name}.{ext}"));
        let data = fs::read(&from).map_err(ctx(&from))?;
        let col = rank_column(&data, &from)?;
        let cols = object_columns(&data, &from)?;
        let times = if k == 0 {
            [
                column(&data, &from, b"start_ns")?,
                column(&data, &from, b"total_ns")?,
            ]
        } else {
            [column(&data, &from, b"first_ns")?; 2]
        };
        let max = if k == 0 { want } else { u64::MAX };
        // Rank and pid are kept: the rows are only selected here.
        let mut f = Vec::new();
        let (rank, pid) = {
            let rec = Records::new(&data).nth(1).unwrap_or_default();
            fields(rec, &mut f);
            let num = |c: usize| {
                f.get(c)
                    .and_then(|&(s, e)| std::str::from_utf8(&rec[s..e]).ok())
                    .and_then(|t| t.parse::<i64>().ok())
                    .unwrap_or(0)
            };
            (num(col), num(col + 1) as u32)
        };
        rewrite_rows(&data, col, rank, pid, max, &mut out[k], |rec, f| {
            let num = |c: usize| {
                f.get(c)
                    .and_then(|&(s, e)| std::str::from_utf8(&rec[s..e]).ok())
                    .and_then(|t| t.parse::<u64>().ok())
                    .unwrap_or(0)
            };
            object_key(rec, f, cols, &mut key);
            if k == 0 {
                end_ns = end_ns.max(num(times[0]).saturating_add(num(times[1])));
                if !touched.contains(&key) {
                    touched.insert(key.clone());
                }
                true
            } else {
                touched.contains(&key) && num(times[0]) <= end_ns
            }
        })
        .map_err(|e| BenchError::new(format!("{}: {e}", from.display())))?;
    }
    let [trace, objects] = out;
    Ok((trace, objects))
}

/// Copies the set from the source into `set_dir` (via a temporary directory).
fn make_set(
    spec: &SetSpec,
    source_dir: &Path,
    source: &SourceManifest,
    set_dir: &Path,
    progress: &mut dyn FnMut(&str),
) -> Result<SetManifest, BenchError> {
    let t0 = Instant::now();
    let tmp = spec.work_dir.join(format!(
        "set-r{}-f{}.tmp{}",
        spec.records,
        spec.files,
        std::process::id()
    ));
    if tmp.exists() {
        fs::remove_dir_all(&tmp).map_err(ctx(&tmp))?;
    }
    fs::create_dir_all(&tmp)?;
    let order = source.order();
    let mut per_file = Vec::with_capacity(spec.files);
    let (mut bytes, mut trace_bytes) = (0u64, 0u64);
    let mut buf = Vec::new();
    let mut parts: HashMap<(usize, usize, u64), Part> = HashMap::new();
    let every = (spec.files / 16).max(16);
    for i in 0..spec.files {
        let (ri, rank) = order[i % order.len()];
        let run = &source.runs[ri];
        let src_stem = &run.stems[rank];
        let src = source_dir.join(&run.workload).join(src_stem);
        let pid = PID_BASE + i as u32;
        let stem = format!("h5prov-r{i}-p{pid}");
        let want = quota(spec.records, spec.files, i);
        // The source's first `want` records and the objects rows they touch, prepared
        // once per source and quota (replicas of a source differ only in rank and pid).
        let part = match parts.entry((ri, rank, want)) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(e) => e.insert(source_part(&src, want)?),
        };
        let (mut copied, mut record_bytes) = (0, 0u64);
        for (ext, data) in [("trace.csv", &part.0), ("objects.csv", &part.1)] {
            let from = src.with_file_name(format!("{src_stem}.{ext}"));
            let col = rank_column(data, &from)?;
            buf.clear();
            let rows = rewrite_identity(data, col, i as i64, pid, u64::MAX, &mut buf)
                .map_err(|e| BenchError::new(format!("{}: {e}", from.display())))?;
            let to = tmp.join(format!("{stem}.{ext}"));
            fs::write(&to, &buf).map_err(ctx(&to))?;
            bytes += buf.len() as u64;
            if ext == "trace.csv" {
                if rows != want {
                    return Err(BenchError::new(format!(
                        "{}: {rows} records, {want} needed",
                        from.display()
                    )));
                }
                copied = rows;
                trace_bytes += buf.len() as u64;
                // The meta counts record bytes, not the header line.
                let header = buf.iter().position(|&b| b == b'\n').map_or(0, |i| i + 1);
                record_bytes = (buf.len() - header) as u64;
            }
        }
        let from = src.with_file_name(format!("{src_stem}.meta.json"));
        let mut meta: serde_json::Value = read_json(&from)
            .ok_or_else(|| BenchError::new(format!("{}: not JSON", from.display())))?;
        meta["rank"] = i.into();
        meta["pid"] = pid.into();
        meta["world_size"] = spec.files.into();
        // The set copies the first rows of the source trace: its meta says so, or the
        // analyzer rightly reports the trace as shorter than its meta.
        meta["records"] = copied.into();
        meta["bytes_written"] = record_bytes.into();
        meta["dropped"] = 0.into();
        let text = serde_json::to_string(&meta).unwrap_or_default() + "\n";
        fs::write(tmp.join(format!("{stem}.meta.json")), &text)?;
        bytes += text.len() as u64;
        per_file.push(SetFile {
            stem,
            source: format!("{}/{src_stem}", run.workload),
            records: copied,
        });
        if (i + 1) % every == 0 || i + 1 == spec.files {
            progress(&format!(
                "[analyzer] copied {}/{} process files ({:.0} MB)",
                i + 1,
                spec.files,
                bytes as f64 / 1e6
            ));
        }
    }
    let m = SetManifest {
        generator: GENERATOR_VERSION,
        records: spec.records,
        files: spec.files,
        source_key: source.key(),
        source: source.clone(),
        bytes,
        trace_bytes,
        per_file,
        copy_s: t0.elapsed().as_secs_f64(),
    };
    write_json(&tmp.join("manifest.json"), &m)?;
    if set_dir.exists() {
        fs::remove_dir_all(set_dir).map_err(ctx(set_dir))?;
    }
    fs::rename(&tmp, set_dir).map_err(ctx(set_dir))?;
    Ok(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_respect_quotes() {
        let d = b"a,b\n1,\"x\ny\"\n2,\"p,q\"\n3,z";
        let r: Vec<&[u8]> = Records::new(d).collect();
        assert_eq!(
            r,
            [&b"a,b"[..], b"1,\"x\ny\"", b"2,\"p,q\"", b"3,z"],
            "{r:?}"
        );
        let mut f = Vec::new();
        fields(b"2,\"p,q\",", &mut f);
        assert_eq!(f, [(0, 1), (2, 7), (8, 8)]);
    }

    #[test]
    fn rewrites_only_rank_and_pid() {
        let d =
            b"seq,rank,pid,op,detail\n0,3,77,file.open,\"s=0,1\"\n1,3,77,file.close,\n2,3,77,x,\n";
        let mut out = Vec::new();
        let rows = rewrite_identity(d, 1, 12, 100_012, 2, &mut out).unwrap();
        assert_eq!(rows, 2);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "seq,rank,pid,op,detail\n0,12,100012,file.open,\"s=0,1\"\n1,12,100012,file.close,\n"
        );
        let mut out = Vec::new();
        assert!(rewrite_identity(b"h\nx,y\n", 1, 0, 0, 9, &mut out).is_err());
        assert!(rewrite_identity(b"h\na,b,c\n", 1, 0, 0, 9, &mut out).is_err());
    }

    #[test]
    fn quotas_add_up() {
        let q: Vec<u64> = (0..4).map(|i| quota(10, 4, i)).collect();
        assert_eq!(q, [3, 3, 2, 2]);
        assert_eq!(
            (0..64).map(|i| quota(10_000_000, 64, i)).sum::<u64>(),
            10_000_000
        );
    }
}

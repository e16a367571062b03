//! The PyTables-like line of the analyzer benchmark (issue 37, item 6): how the time and
//! memory of `h5prov report --json` grow with the number of distinct objects (datasets,
//! groups, attributes), the case of PyTables' test suite (17.1M records over millions of
//! objects), where per-object state, not the records, dominates.
//!
//! Each set is made from the real `metadata-heavy` source traces of the analyzer benchmark
//! ([`crate::traceset`], `level=dataset`: about 7 records per object, every object a
//! group, dataset or attribute the workload made). Copy `c` of a source process becomes
//! process file `c` (rank `c`, pid [`PID_BASE`]` + c`) with its `file` column renamed
//! `<file>-c<c>`, so every copy's objects are distinct objects of a distinct file. A set of
//! `K` objects holds as many whole copies as fit, then, of the next copy, the records and
//! objects rows of its first objects (in the order the trace first touches them) up to
//! `K`. So the records per object stay those of the real run, and the total grows with
//! `K`. No other field is changed and no row is made up.
//!
//! Each set is read once untimed (into the page cache), reported on once (`h5prov report
//! DIR --json --no-progress`, output to a file that is checked and removed), and measured: wall time, CPU time (user + system, all
//! threads) and peak RSS. A set is deleted after its run (the 1M-object set is about
//! 1.5 GB of CSV; making it again is a copy).

use std::collections::HashSet;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use serde::Serialize;

use crate::proc::run_measured;
use crate::traceset::{
    ctx, fields, fnv1a, object_columns, object_key, rank_column, read_json, Records,
    SourceManifest, PID_BASE,
};
use crate::BenchError;

/// Object counts of the line.
pub const DEFAULT_OBJECTS: [u64; 3] = [10_000, 100_000, 1_000_000];
/// Object counts with `--quick`.
pub const QUICK_OBJECTS: [u64; 2] = [1_000, 3_000];

/// The source workload copied.
const SOURCE_WORKLOAD: &str = "metadata-heavy";

/// One size of the line.
#[derive(Clone, Debug, Serialize)]
pub struct ObjectsRow {
    /// Distinct objects (`kind`, `file`, `path`) the records touch.
    pub objects: u64,
    /// Process files (copies of source processes).
    pub processes: usize,
    /// Trace records.
    pub records: u64,
    /// Bytes of the set (traces, objects rows, meta).
    pub set_bytes: u64,
    /// Wall time of `h5prov report --json`, s.
    pub wall_s: f64,
    /// Its CPU time, user + system, all threads, s.
    pub cpu_s: f64,
    /// Its peak RSS, MB (10^6 bytes).
    pub peak_rss_mb: f64,
    /// Peak RSS per object, bytes.
    pub rss_bytes_per_object: f64,
    /// Wall time per million objects, s.
    pub wall_s_per_million_objects: f64,
    /// Seconds it took to copy the set (not measured in the run).
    pub copy_s: f64,
}

/// The whole line.
#[derive(Clone, Debug, Serialize)]
pub struct ObjectsLine {
    /// The command measured (the set shown as `DIR`).
    pub command: String,
    /// What the sets were made from.
    pub source: String,
    /// Records per object of the source (all its processes).
    pub records_per_object: f64,
    /// One row per size, smallest first.
    pub rows: Vec<ObjectsRow>,
    /// Sizes not run, and why (not enough free disk for the set).
    pub skipped: Vec<String>,
}

/// Free disk space under `dir`, bytes (`df -B1 --output=avail`), if `df` answers.
fn free_bytes(dir: &Path) -> Option<u64> {
    let out = Command::new("df")
        .args(["-B1", "--output=avail"])
        .arg(dir)
        .output()
        .ok()?;
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .nth(1)?
        .trim()
        .parse()
        .ok()
}

/// Free disk a set must leave for everything else (the machine's other work).
const DISK_MARGIN: u64 = 1 << 30;

/// One source process's text and its objects in first-touch order.
struct Source {
    /// `h5prov-r<rank>-p<pid>` of the source.
    stem: String,
    trace: Vec<u8>,
    objects: Vec<u8>,
    meta: serde_json::Value,
    /// Object keys (FNV-1a of `kind\0file\0path\0`) in the order the trace first
    /// touches them. Hashes, not the keys: one allocation, returned to the system when the
    /// source is dropped, before `h5prov` is started (a child starts with the parent's
    /// resident memory counted in its peak RSS).
    order: Vec<u64>,
    /// Records of the trace.
    records: u64,
}

fn load_source(dir: &Path, stem: &str) -> Result<Source, BenchError> {
    let path = |ext: &str| dir.join(format!("{stem}.{ext}"));
    let trace = fs::read(path("trace.csv")).map_err(ctx(&path("trace.csv")))?;
    let objects = fs::read(path("objects.csv")).map_err(ctx(&path("objects.csv")))?;
    let meta = read_json(&path("meta.json"))
        .ok_or_else(|| BenchError::new(format!("{}: not JSON", path("meta.json").display())))?;
    let cols = object_columns(&trace, &path("trace.csv"))?;
    let mut seen: HashSet<u64> = HashSet::new();
    let (mut order, mut records) = (Vec::new(), 0);
    let (mut f, mut key) = (Vec::new(), Vec::new());
    for rec in Records::new(&trace).skip(1) {
        fields(rec, &mut f);
        object_key(rec, &f, cols, &mut key);
        records += 1;
        let h = fnv1a(&key);
        if seen.insert(h) {
            order.push(h);
        }
    }
    Ok(Source {
        stem: stem.to_string(),
        trace,
        objects,
        meta,
        order,
        records,
    })
}

/// Copies the rows of `data` (CSV with a header) whose object is in `keep` (all when
/// `None`) into `out`, with rank, pid and file rewritten; returns the rows copied.
fn copy_rows(
    data: &[u8],
    path: &Path,
    keep: Option<&HashSet<u64>>,
    copy: usize,
    out: &mut Vec<u8>,
) -> Result<u64, BenchError> {
    let rank_col = rank_column(data, path)?;
    let cols = object_columns(data, path)?;
    let file_col = cols[1];
    let mut recs = Records::new(data);
    out.extend_from_slice(recs.next().unwrap_or_default());
    out.push(b'\n');
    let (mut f, mut key) = (Vec::new(), Vec::new());
    let rank = copy.to_string();
    let pid = (PID_BASE + copy as u32).to_string();
    let suffix = format!("-c{copy}");
    let mut rows = 0;
    for rec in recs {
        fields(rec, &mut f);
        if let Some(keep) = keep {
            object_key(rec, &f, cols, &mut key);
            if !keep.contains(&fnv1a(&key)) {
                continue;
            }
        }
        if f.len() <= rank_col + 1 || f.len() <= file_col {
            return Err(BenchError::new(format!(
                "{}: row {} has {} fields",
                path.display(),
                rows + 1,
                f.len()
            )));
        }
        for (i, &(s, e)) in f.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            if i == rank_col {
                out.extend_from_slice(rank.as_bytes());
            } else if i == rank_col + 1 {
                out.extend_from_slice(pid.as_bytes());
            } else if i == file_col {
                // A quoted file name keeps its quotes around the new name.
                let v = &rec[s..e];
                match v.strip_suffix(b"\"") {
                    Some(inner) => {
                        out.extend_from_slice(inner);
                        out.extend_from_slice(suffix.as_bytes());
                        out.push(b'"');
                    }
                    None => {
                        out.extend_from_slice(v);
                        out.extend_from_slice(suffix.as_bytes());
                    }
                }
            } else {
                out.extend_from_slice(&rec[s..e]);
            }
        }
        out.push(b'\n');
        rows += 1;
    }
    Ok(rows)
}

/// Makes the set of `objects` objects in `dir` from `sources`; returns (processes,
/// records, bytes).
fn make_set(sources: &[Source], objects: u64, dir: &Path) -> Result<(usize, u64, u64), BenchError> {
    if dir.exists() {
        fs::remove_dir_all(dir).map_err(ctx(dir))?;
    }
    fs::create_dir_all(dir).map_err(ctx(dir))?;
    // Objects of each copy: whole sources, then the first objects of the last.
    let mut plan = Vec::new();
    let mut left = objects;
    while left > 0 {
        let n = (sources[plan.len() % sources.len()].order.len() as u64).min(left);
        plan.push(n);
        left -= n;
    }
    let (mut records, mut bytes) = (0u64, 0u64);
    let mut buf = Vec::new();
    for (copy, &n) in plan.iter().enumerate() {
        let src = &sources[copy % sources.len()];
        let keep: Option<HashSet<u64>> =
            (n < src.order.len() as u64).then(|| src.order[..n as usize].iter().copied().collect());
        let pid = PID_BASE + copy as u32;
        let stem = format!("h5prov-r{copy}-p{pid}");
        let mut rows = 0;
        for (ext, data) in [("trace.csv", &src.trace), ("objects.csv", &src.objects)] {
            buf.clear();
            let from = PathBuf::from(format!("{}/{}.{ext}", SOURCE_WORKLOAD, src.stem));
            let copied = copy_rows(data, &from, keep.as_ref(), copy, &mut buf)?;
            if ext == "trace.csv" {
                rows = copied;
            }
            let to = dir.join(format!("{stem}.{ext}"));
            fs::write(&to, &buf).map_err(ctx(&to))?;
            bytes += buf.len() as u64;
        }
        let header = src
            .trace
            .iter()
            .position(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
        let mut meta = src.meta.clone();
        meta["rank"] = copy.into();
        meta["pid"] = pid.into();
        meta["world_size"] = plan.len().into();
        meta["records"] = rows.into();
        meta["bytes_written"] = (fs::metadata(dir.join(format!("{stem}.trace.csv")))
            .map_or(0, |m| m.len())
            .saturating_sub(header as u64))
        .into();
        meta["dropped"] = 0.into();
        let text = serde_json::to_string(&meta).unwrap_or_default() + "\n";
        fs::write(dir.join(format!("{stem}.meta.json")), &text)?;
        bytes += text.len() as u64;
        records += rows;
    }
    Ok((plan.len(), records, bytes))
}

/// Runs the line: for each of `objects` (ascending), makes the set under `work_dir`,
/// reports on it with `h5prov`, measures and deletes it. `source_dir` is the analyzer
/// benchmark's `source/` with its `manifest`.
pub fn run(
    h5prov: &Path,
    source_dir: &Path,
    manifest: &SourceManifest,
    work_dir: &Path,
    objects: &[u64],
    progress: &mut dyn FnMut(&str),
) -> Result<ObjectsLine, BenchError> {
    let run = manifest
        .runs
        .iter()
        .find(|r| r.workload == SOURCE_WORKLOAD)
        .ok_or_else(|| BenchError::new(format!("the source has no {SOURCE_WORKLOAD} run")))?;
    let dir = source_dir.join(SOURCE_WORKLOAD);
    let load = || {
        run.stems
            .iter()
            .map(|stem| load_source(&dir, stem))
            .collect::<Result<Vec<_>, _>>()
    };
    let (recs, objs, src_bytes) = load()?.iter().fold((0u64, 0u64, 0u64), |a, s| {
        (
            a.0 + s.records,
            a.1 + s.order.len() as u64,
            a.2 + (s.trace.len() + s.objects.len()) as u64,
        )
    });
    if objs == 0 {
        return Err(BenchError::new(format!("{}: no objects", dir.display())));
    }
    let mut sizes = objects.to_vec();
    sizes.sort_unstable();
    sizes.dedup();
    let mut rows = Vec::new();
    let mut skipped = Vec::new();
    fs::create_dir_all(work_dir).map_err(ctx(work_dir))?;
    for &k in sizes.iter().filter(|&&k| k > 0) {
        let set = work_dir.join(format!("objects-{k}"));
        // About the source's bytes per object (a partial copy holds its file's records).
        let need = (src_bytes as f64 / objs as f64 * k as f64) as u64;
        if let Some(free) = free_bytes(work_dir).filter(|&f| f < need + DISK_MARGIN) {
            let why = format!(
                "{k} objects skipped: the set needs about {:.1} GB, {:.1} GB free (keeping {:.1} GB)",
                need as f64 / 1e9,
                free as f64 / 1e9,
                DISK_MARGIN as f64 / 1e9
            );
            progress(&format!("[analyzer] {why}"));
            skipped.push(why);
            continue;
        }
        let t0 = Instant::now();
        // The sources are read for each set and dropped before h5prov starts.
        let (processes, records, set_bytes) = make_set(&load()?, k, &set)?;
        let copy_s = t0.elapsed().as_secs_f64();
        // Read once, untimed, so the run finds the set in the page cache (as the 10M set's
        // runs do) rather than timing the disk.
        for e in fs::read_dir(&set).map_err(ctx(&set))? {
            let p = e?.path();
            std::io::copy(
                &mut fs::File::open(&p).map_err(ctx(&p))?,
                &mut std::io::sink(),
            )?;
        }
        let out_json = work_dir.join(format!("objects-{k}.report.json"));
        let err_log = work_dir.join(format!("objects-{k}.stderr"));
        let mut cmd = Command::new(h5prov);
        cmd.arg("report")
            .arg(&set)
            .args(["--json", "--no-progress"])
            .stdin(Stdio::null())
            .stdout(fs::File::create(&out_json).map_err(ctx(&out_json))?)
            .stderr(fs::File::create(&err_log).map_err(ctx(&err_log))?);
        let m = run_measured(&mut cmd, "h5prov report --json", Some(&err_log))?;
        // The report read every record of the set.
        let read: serde_json::Value = read_json(&out_json)
            .ok_or_else(|| BenchError::new(format!("{}: not JSON", out_json.display())))?;
        let got = read["run"]["records"].as_u64().unwrap_or(0);
        if got != records {
            return Err(BenchError::new(format!(
                "{}: the report read {got} records, the set has {records}",
                set.display()
            )));
        }
        drop(read);
        for p in [&out_json, &err_log] {
            let _ = fs::remove_file(p);
        }
        fs::remove_dir_all(&set).map_err(ctx(&set))?;
        let row = ObjectsRow {
            objects: k,
            processes,
            records,
            set_bytes,
            wall_s: m.wall_ns as f64 / 1e9,
            cpu_s: m.cpu_ns as f64 / 1e9,
            peak_rss_mb: m.max_rss_kb as f64 * 1024.0 / 1e6,
            rss_bytes_per_object: m.max_rss_kb as f64 * 1024.0 / k as f64,
            wall_s_per_million_objects: m.wall_ns as f64 / 1e9 / (k as f64 / 1e6),
            copy_s,
        };
        progress(&format!(
            "[analyzer] objects {k}: {records} records in {processes} files, wall {:.2} s, \
             CPU {:.2} s, peak {:.0} MB",
            row.wall_s, row.cpu_s, row.peak_rss_mb
        ));
        rows.push(row);
    }
    Ok(ObjectsLine {
        command: "h5prov report DIR --json --no-progress > OUT".into(),
        source: format!(
            "`{} {}` at `level={}`, {} processes: {recs} records, {objs} objects",
            run.workload,
            run.args.join(" "),
            run.level,
            run.procs
        ),
        records_per_object: recs as f64 / objs as f64,
        rows,
        skipped,
    })
}

/// The line as a Markdown section.
pub fn markdown(l: &ObjectsLine) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "## Many objects (PyTables-like)\n");
    let _ = writeln!(
        s,
        "`{}` on sets of growing numbers of distinct objects, each made of copies of {} \
         (each copy's file renamed, so its objects are distinct), at the source's {:.1} \
         records per object: the records grow with the objects (a partial copy holds the \
         first objects its trace touches, its file's records among them). One run per \
         size; CPU is user + system of all threads.\n",
        l.command, l.source, l.records_per_object
    );
    let _ = writeln!(
        s,
        "| objects | processes | records | set MB | wall s | CPU s | peak RSS MB | RSS bytes/object | wall s per 1M objects |"
    );
    let _ = writeln!(s, "|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for r in &l.rows {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {:.0} | {:.2} | {:.2} | {:.0} | {:.0} | {:.2} |",
            r.objects,
            r.processes,
            r.records,
            r.set_bytes as f64 / 1e6,
            r.wall_s,
            r.cpu_s,
            r.peak_rss_mb,
            r.rss_bytes_per_object,
            r.wall_s_per_million_objects
        );
    }
    for why in &l.skipped {
        let _ = writeln!(s, "\n{why}.");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_rewrite_rank_pid_and_file_only_and_keep_the_chosen_objects() {
        let data = b"seq,rank,pid,op,kind,file,path\n\
            0,3,77,file.open,file,a.h5,/\n\
            1,3,77,dataset.open,dataset,\"b,1.h5\",/d\n\
            2,3,77,dataset.close,dataset,\"b,1.h5\",/d\n";
        let p = Path::new("t.trace.csv");
        let mut out = Vec::new();
        assert_eq!(copy_rows(data, p, None, 2, &mut out).unwrap(), 3);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "seq,rank,pid,op,kind,file,path\n\
             0,2,100002,file.open,file,a.h5-c2,/\n\
             1,2,100002,dataset.open,dataset,\"b,1.h5-c2\",/d\n\
             2,2,100002,dataset.close,dataset,\"b,1.h5-c2\",/d\n"
        );
        let keep: HashSet<u64> = [fnv1a(b"file\0a.h5\0/\0")].into();
        let mut out = Vec::new();
        assert_eq!(copy_rows(data, p, Some(&keep), 0, &mut out).unwrap(), 1);
    }
}

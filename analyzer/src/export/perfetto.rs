//! `h5prov export --perfetto`: Chrome trace-event JSON (the "JSON Object Format") that
//! opens in the Perfetto UI and `chrome://tracing`. One complete event (`"ph":"X"`) per
//! record; `pid` is the MPI rank (or the process id without MPI), `tid` the kernel thread;
//! `ts`/`dur` are microseconds (with ns decimals) since the earliest process start.
//! Metadata events (`"ph":"M"`) name every process and thread and sort processes by rank.
//! An asynchronous operation (`async` 1, `req` ≠ 0) and the request row that saw it finished
//! (`req_done` ≠ 0) carry `req` (and `req_done`, `exec_ns`) in their args, and a flow
//! (`"ph":"s"` at the issue, `"ph":"f"` at the completion, id `"<pid>.<req>"`) draws an
//! arrow from one to the other.

use crate::read::objects::read_meta;
use crate::read::record::RecordRef;
use crate::read::{Error, Inputs, ReadOptions};
use h5prov_format::Encoding;
use rayon::prelude::*;
use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::Path;

/// What an export wrote.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExportStats {
    /// Complete events written.
    pub events: u64,
    /// Processes (tracks).
    pub processes: usize,
    /// Threads.
    pub threads: usize,
    /// Files with a truncated last line.
    pub truncated: Vec<String>,
    /// Malformed rows skipped.
    pub malformed_rows: u64,
}

fn us(ns: i128) -> String {
    let sign = if ns < 0 { "-" } else { "" };
    let a = ns.unsigned_abs();
    format!("{sign}{}.{:03}", a / 1000, a % 1000)
}

fn js(s: &str) -> String {
    serde_json::to_string(s).expect("string serialises")
}

fn track_pid(r: &RecordRef<'_>) -> i64 {
    if r.rank >= 0 {
        r.rank
    } else {
        i64::from(r.pid)
    }
}

struct FileOut {
    buf: Vec<u8>,
    events: u64,
    threads: BTreeSet<(i64, u64)>,
    procs: BTreeMap<i64, (i64, u32)>,
    truncated: Option<String>,
    malformed: u64,
}

fn export_file(
    path: &Path,
    enc: Encoding,
    opts: &ReadOptions,
    origin: u64,
) -> Result<FileOut, Error> {
    let mut out = FileOut {
        buf: Vec::new(),
        events: 0,
        threads: BTreeSet::new(),
        procs: BTreeMap::new(),
        truncated: None,
        malformed: 0,
    };
    let mut sink = |r: &RecordRef<'_>| {
        let pid = track_pid(r);
        out.procs.entry(pid).or_insert((r.rank, r.pid));
        out.threads.insert((pid, r.tid));
        let _ = write!(
            out.buf,
            ",\n{{\"name\":{},\"cat\":{},\"ph\":\"X\",\"ts\":{},\"dur\":{},\"pid\":{},\"tid\":{},\"args\":{{\"seq\":{},\"file\":{},\"path\":{},\"bytes\":{},\"status\":{},\"self_ns\":{}}}}}",
            js(r.op),
            js(h5prov_format::op_family(r.op)),
            us(r.start_ns as i128 - origin as i128),
            us(r.total_ns as i128),
            pid,
            r.tid,
            r.seq,
            js(r.file),
            js(r.path),
            r.bytes,
            r.status,
            r.total_ns.saturating_sub(r.under_ns)
        );
        if r.req != 0 && (r.is_async != 0 || r.req_done != 0) {
            // Reopen the args object to add the request's columns.
            out.buf.truncate(out.buf.len() - 2);
            let _ = write!(
                out.buf,
                ",\"async\":{},\"req\":{},\"req_done\":{},\"exec_ns\":{}}}}}",
                r.is_async, r.req, r.req_done, r.exec_ns
            );
            // The flow: from the start to the completion row's start (a flow's end
            // binds to the enclosing slice: `"bp":"e"`).
            let (ph, extra) = if r.is_async != 0 {
                ("s", "")
            } else {
                ("f", ",\"bp\":\"e\"")
            };
            let _ = write!(
                out.buf,
                ",\n{{\"name\":\"async\",\"cat\":\"async\",\"ph\":\"{ph}\",\"id\":\"{}.{}\",\"ts\":{},\"pid\":{},\"tid\":{}{extra}}}",
                r.pid,
                r.req,
                us(r.start_ns as i128 - origin as i128),
                pid,
                r.tid
            );
        }
        out.events += 1;
    };
    let d = crate::read::read_trace(path, enc, opts, &mut sink)?;
    out.truncated = d.truncated_line.map(|l| format!("{}:{l}", path.display()));
    out.malformed = d.malformed;
    Ok(out)
}

/// Writes the trace-event JSON of every trace file in `inputs` to `w`. Files are converted
/// in parallel (a few at a time, so memory stays bounded) and written in path order.
pub fn perfetto(
    inputs: &Inputs,
    opts: &ReadOptions,
    w: &mut dyn Write,
) -> Result<ExportStats, Error> {
    let metas: Vec<_> = inputs
        .metas
        .iter()
        .filter_map(|m| read_meta(&m.path).ok())
        .collect();
    // Origin: the earliest process start, else the earliest first record.
    let mut origin = metas
        .iter()
        .map(|m| m.start_ns)
        .filter(|&s| s > 0)
        .min()
        .unwrap_or(0);
    if origin == 0 {
        let firsts: Vec<u64> = inputs
            .traces
            .par_iter()
            .map(|(f, enc)| {
                let mut min = u64::MAX;
                let mut sink = |r: &RecordRef<'_>| min = min.min(r.start_ns);
                let _ = crate::read::read_trace(&f.path, *enc, opts, &mut sink);
                min
            })
            .collect();
        origin = firsts
            .into_iter()
            .min()
            .filter(|&m| m != u64::MAX)
            .unwrap_or(0);
    }
    let io = |e: std::io::Error| Error::Other(format!("writing the Perfetto export: {e}"));
    w.write_all(
        b"{\"displayTimeUnit\":\"ns\",\"otherData\":{\"generator\":\"h5prov\"},\"traceEvents\":[\n",
    )
    .map_err(io)?;
    let mut stats = ExportStats::default();
    let mut threads: BTreeSet<(i64, u64)> = BTreeSet::new();
    let mut procs: BTreeMap<i64, (i64, u32)> = BTreeMap::new();
    // The first element is a metadata event, so every later event starts with ",\n".
    w.write_all(b"{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":-1,\"tid\":0,\"args\":{\"name\":\"h5prov\"}}")
        .map_err(io)?;
    let chunk = rayon::current_num_threads().max(1) * 2;
    for group in inputs.traces.chunks(chunk) {
        let outs: Vec<Result<FileOut, Error>> = group
            .par_iter()
            .map(|(f, enc)| export_file(&f.path, *enc, opts, origin))
            .collect();
        for o in outs {
            let o = o?;
            w.write_all(&o.buf).map_err(io)?;
            stats.events += o.events;
            threads.extend(o.threads);
            for (k, v) in o.procs {
                procs.entry(k).or_insert(v);
            }
            stats.truncated.extend(o.truncated);
            stats.malformed_rows += o.malformed;
        }
    }
    let host_of: BTreeMap<(i64, u32), String> = metas
        .iter()
        .map(|m| ((m.rank, m.pid), m.host.clone()))
        .collect();
    for (pid, (rank, ospid)) in &procs {
        let host = host_of
            .get(&(*rank, *ospid))
            .map(|h| format!("@{h}"))
            .unwrap_or_default();
        let name = if *rank >= 0 {
            format!("rank {rank} (pid {ospid}{host})")
        } else {
            format!("pid {ospid}{host}")
        };
        write!(
            w,
            ",\n{{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":{pid},\"tid\":0,\"args\":{{\"name\":{}}}}}\
             ,\n{{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":{pid},\"tid\":0,\"args\":{{\"sort_index\":{pid}}}}}",
            js(&name)
        )
        .map_err(io)?;
    }
    for (pid, tid) in &threads {
        write!(
            w,
            ",\n{{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":{pid},\"tid\":{tid},\"args\":{{\"name\":\"tid {tid}\"}}}}"
        )
        .map_err(io)?;
    }
    w.write_all(b"\n]}\n").map_err(io)?;
    stats.processes = procs.len();
    stats.threads = threads.len();
    Ok(stats)
}

#[cfg(test)]
mod tests {
    use super::us;

    #[test]
    fn micros() {
        assert_eq!(us(0), "0.000");
        assert_eq!(us(1_234_567), "1234.567");
        assert_eq!(us(-1500), "-1.500");
    }
}

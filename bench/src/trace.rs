//! Measuring what h5prov wrote into a trace directory.

use std::fs::{self, File};
use std::io::{self, Read};
use std::path::Path;

use serde::Serialize;

/// Size and record count of one trace directory.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct TraceStats {
    /// Files found (recursively).
    pub files: u64,
    /// Bytes of every file in the directory (traces, objects, meta).
    pub bytes: u64,
    /// Trace records: lines of `*.trace.*` files, minus one header per CSV file; the
    /// length-prefixed records of `*.trace.bin` files.
    pub records: u64,
}

/// Counts lines: newline bytes, plus one for a non-empty unterminated last line.
fn count_lines(path: &Path) -> io::Result<u64> {
    let mut f = File::open(path)?;
    let mut buf = vec![0u8; 1 << 16];
    let mut lines = 0u64;
    let mut last = b'\n';
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        lines += buf[..n].iter().filter(|&&b| b == b'\n').count() as u64;
        last = buf[n - 1];
    }
    if last != b'\n' {
        lines += 1;
    }
    Ok(lines)
}

/// Counts the records of a binary trace file (`*.zst` decompressed) with the format
/// crate's framing reader, as the connector counts its buffered ones (`bin_records`):
/// every non-zero length, so a last record cut short counts too.
fn count_bin_records(path: &Path) -> io::Result<u64> {
    let mut r = h5prov_format::open_bin_file(path)?;
    match r.header() {
        Ok(h5prov_format::BinHeader::Body(_)) => {}
        Ok(_) => return Ok(0),
        Err(e) => {
            let e = format!("{}: {e}", path.display());
            return Err(io::Error::new(io::ErrorKind::InvalidData, e));
        }
    }
    let mut n = 0;
    while let Some(f) = r.next_frame()? {
        use h5prov_format::BinFrame::{CutRecord, Record, TooLong};
        n += u64::from(matches!(
            f,
            Record { .. } | CutRecord { .. } | TooLong { .. }
        ));
    }
    Ok(n)
}

/// Walks `dir` recursively. A missing directory counts as empty.
pub fn measure(dir: &Path) -> io::Result<TraceStats> {
    let mut stats = TraceStats::default();
    if !dir.exists() {
        return Ok(stats);
    }
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in fs::read_dir(&d)? {
            let entry = entry?;
            let ty = entry.file_type()?;
            let path = entry.path();
            if ty.is_dir() {
                stack.push(path);
                continue;
            }
            stats.files += 1;
            stats.bytes += entry.metadata()?.len();
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.ends_with(".trace.bin") || name.ends_with(".trace.bin.zst") {
                stats.records += count_bin_records(&path)?;
            } else if name.contains(".trace.") {
                let lines = count_lines(&path)?;
                let header = u64::from(name.ends_with(".csv") && lines > 0);
                stats.records += lines - header;
            }
        }
    }
    Ok(stats)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_records_minus_csv_headers() {
        let dir = std::env::temp_dir().join(format!("h5prov-bench-trace-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(dir.join("d0001")).unwrap();
        fs::write(dir.join("a.trace.csv"), "seq,op\n0,x\n1,y\n").unwrap();
        fs::write(dir.join("d0001/b.trace.jsonl"), "{}\n{}").unwrap();
        fs::write(dir.join("a.meta.json"), "{}\n").unwrap();
        // Header of 2 bytes, two records of 1 and 0 bytes, a cut third one.
        let bin = b"H5PROVB1\x02\0\0\0hh\x01\0\0\0\n\0\0\0\0\x09\0\0\0\n";
        fs::write(dir.join("c.trace.bin"), bin).unwrap();
        let s = measure(&dir).unwrap();
        assert_eq!(s.files, 4);
        assert_eq!(s.records, 2 + 2 + 2);
        assert_eq!(s.bytes, 15 + 5 + 3 + bin.len() as u64);
        fs::remove_dir_all(&dir).unwrap();
        assert_eq!(measure(&dir).unwrap(), TraceStats::default());
    }
}

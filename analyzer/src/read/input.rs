//! Opening one input: a plain file, a `*.zst` or `*.gz` file, or a member of a merged file.
//!
//! Every reader takes a path. A member of a merged file has the path
//! `<merged file>/<member name>` (e.g. `run.h5prov/d0001/h5prov-r3-p1003.trace.csv`), so
//! messages name both the merged file and the member, and a report of a merged file shows
//! the same paths as a report of the directory it was made from, under another input name.
//! Such a path does not exist on disk; [`open`] resolves it through the merged file's
//! index (loaded once per process, see [`merged::open_archive`]).

use super::merged;
use super::Error;
use h5prov_format::{classify, Encoding, FileRole};
use std::fs::File;
use std::io::{self, BufReader, Read};
use std::path::Path;

/// Compression of a file, from its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    /// Stored as is.
    None,
    /// `*.zst`: Zstandard (one or more frames).
    Zstd,
    /// `*.gz`: gzip (one or more members).
    Gzip,
}

impl Compression {
    /// The compression a file name's suffix announces, and the name without it.
    pub fn of_name(name: &str) -> (Compression, &str) {
        if let Some(s) = name.strip_suffix(".zst") {
            (Compression::Zstd, s)
        } else if let Some(s) = name.strip_suffix(".gz") {
            (Compression::Gzip, s)
        } else {
            (Compression::None, name)
        }
    }

    /// The compression of a path's file name.
    pub fn of_path(path: &Path) -> Compression {
        path.file_name()
            .and_then(|n| n.to_str())
            .map_or(Compression::None, |n| Compression::of_name(n).0)
    }
}

/// Classifies an input by name like [`h5prov_format::classify`], accepting a trailing
/// `.zst` or `.gz` (`h5prov-r0-p1.trace.csv.zst` is a CSV trace).
pub fn classify_input(path: &Path) -> Option<(FileRole, Encoding)> {
    let name = path.file_name()?.to_str()?;
    let (_, inner) = Compression::of_name(name);
    classify(Path::new(inner))
}

/// Adds context to the errors of a decompressing reader.
struct Context<R> {
    inner: R,
    what: &'static str,
}

impl<R: Read> Read for Context<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.inner.read(buf).map_err(|e| {
            let kind = match e.kind() {
                io::ErrorKind::UnexpectedEof => io::ErrorKind::UnexpectedEof,
                _ => io::ErrorKind::InvalidData,
            };
            io::Error::new(kind, format!("{}: {e}", self.what))
        })
    }
}

/// Opens an input and returns its content, decompressed as its name says.
///
/// `path` is a file or `<merged file>/<member name>`. Errors name `path`. A trace file
/// with a pending sidecar next to it (its process ended without closing HDF5: `_exit`,
/// `kill -9`) reads as one trace: the file, cut where the sidecar says a write was in
/// progress, then the sidecar's records ([`pending_of`]).
pub fn open(path: &Path) -> Result<Box<dyn Read + Send>, Error> {
    let raw = open_raw(path)?;
    let Some(side) = pending_of(path) else {
        return decompress(raw, Compression::of_path(path)).map_err(|e| Error::io(path, e));
    };
    let pending = Pending::open(&side)?;
    let raw: Box<dyn Read + Send> = match pending.cut {
        Some(at) => Box::new(raw.take(at)),
        None => raw,
    };
    let trace = decompress(raw, Compression::of_path(path)).map_err(|e| Error::io(path, e))?;
    Ok(Box::new(trace.chain(pending)))
}

/// The pending sidecar of trace file `path` (`<stem>.pending`, see
/// [`h5prov_format::PENDING_SUFFIX`]), when there is one on disk.
pub fn pending_of(path: &Path) -> Option<std::path::PathBuf> {
    let name = path.file_name()?.to_str()?;
    let (_, inner) = Compression::of_name(name);
    let stem = [".trace.csv", ".trace.jsonl", ".trace.bin"]
        .iter()
        .find_map(|s| inner.strip_suffix(s))?;
    let side = path.with_file_name(format!("{stem}{}", h5prov_format::PENDING_SUFFIX));
    side.is_file().then_some(side)
}

/// Whether trace `path` was read with its process's pending sidecar: one on disk
/// ([`pending_of`]), or, for a member of a merged file, one the merge joined into it
/// ([`merged::Member::recovered`]).
pub fn recovered(path: &Path) -> bool {
    pending_of(path).is_some() || member_recovered(path)
}

/// Whether `path` is a member of a merged file stored with its pending sidecar's records.
fn member_recovered(path: &Path) -> bool {
    if path.exists() {
        return false;
    }
    match merged::find_member(path) {
        Some(Ok((a, i))) => a.members()[i].recovered,
        _ => false,
    }
}

/// The pending sidecar of the process that wrote objects file `path`
/// (`<stem>.objects.{csv,jsonl,bin}`, optionally compressed), when there is one on disk: the
/// process ended without closing HDF5, and its objects file holds only some of its rows.
pub fn pending_of_objects(path: &Path) -> Option<std::path::PathBuf> {
    let name = path.file_name()?.to_str()?;
    let (_, inner) = Compression::of_name(name);
    let stem = [".objects.csv", ".objects.jsonl", ".objects.bin"]
        .iter()
        .find_map(|s| inner.strip_suffix(s))?;
    let side = path.with_file_name(format!("{stem}{}", h5prov_format::PENDING_SUFFIX));
    side.is_file().then_some(side)
}

/// Whether the process that wrote objects file `path` ended without closing HDF5: its
/// pending sidecar is on disk ([`pending_of_objects`]), or, in a merged file, its trace
/// was stored with the sidecar's records.
pub fn objects_of_recovered(path: &Path) -> bool {
    if pending_of_objects(path).is_some() {
        return true;
    }
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
        return false;
    };
    let (_, inner) = Compression::of_name(name);
    let Some(stem) = [".objects.csv", ".objects.jsonl", ".objects.bin"]
        .iter()
        .find_map(|s| inner.strip_suffix(s))
    else {
        return false;
    };
    [".trace.csv", ".trace.jsonl", ".trace.bin"]
        .iter()
        .flat_map(|t| ["", ".zst", ".gz"].map(|c| format!("{stem}{t}{c}")))
        .any(|t| member_recovered(&path.with_file_name(t)))
}

/// The records of a pending sidecar, slot after slot, one slot in memory at a time.
struct Pending {
    file: File,
    path: std::path::PathBuf,
    /// Where the first slot starts, and each slot's size.
    first: u64,
    size: u64,
    /// Slots in the file, and the next one to read.
    slots: u64,
    next: u64,
    /// Where the trace is cut: the offset a slot was being written at.
    cut: Option<u64>,
    /// The current slot's records, and how many of them were handed out.
    cur: Vec<u8>,
    pos: usize,
}

impl Pending {
    fn open(path: &Path) -> Result<Pending, Error> {
        let bad = |what: String| {
            Error::io(
                path,
                io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("pending sidecar: {what}"),
                ),
            )
        };
        let mut file = File::open(path).map_err(|e| Error::io(path, e))?;
        let len = file.metadata().map_err(|e| Error::io(path, e))?.len();
        let mut h = Vec::with_capacity(32);
        (&mut file)
            .take(32)
            .read_to_end(&mut h)
            .map_err(|e| Error::io(path, e))?;
        let (first, size) = h5prov_format::parse_pending_header(&h).map_err(bad)?;
        let slots = len.saturating_sub(first) / size;
        let mut p = Pending {
            file,
            path: path.to_path_buf(),
            first,
            size,
            slots,
            next: 0,
            cut: None,
            cur: Vec::new(),
            pos: 0,
        };
        for i in 0..slots {
            let (draining, _, at) = p.slot_header(i).map_err(|e| Error::io(path, e))?;
            if draining {
                p.cut = Some(p.cut.map_or(at, |c: u64| c.min(at)));
            }
        }
        Ok(p)
    }

    /// Slot `i`'s header: (draining, len, at), its length checked against the slot.
    fn slot_header(&mut self, i: u64) -> io::Result<(bool, u64, u64)> {
        use std::io::{Seek, SeekFrom};
        let mut h = [0u8; 16];
        self.file
            .seek(SeekFrom::Start(self.first + i * self.size))?;
        self.file.read_exact(&mut h)?;
        let word = |k: usize| u64::from_le_bytes(h[k..k + 8].try_into().unwrap_or([0; 8]));
        let (draining, len) = h5prov_format::pending_state(word(0));
        if len > self.size - h5prov_format::PENDING_SLOT_HEADER as u64 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "pending sidecar {}: slot {i} claims {len} bytes, more than a slot holds \
                     (corrupt sidecar)",
                    self.path.display()
                ),
            ));
        }
        Ok((draining, len, word(8)))
    }
}

impl Read for Pending {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        use std::io::{Seek, SeekFrom};
        while self.pos == self.cur.len() {
            if self.next == self.slots {
                return Ok(0);
            }
            let i = self.next;
            self.next += 1;
            let (_, len, _) = self.slot_header(i)?;
            self.cur.resize(len as usize, 0);
            self.pos = 0;
            self.file.seek(SeekFrom::Start(
                self.first + i * self.size + h5prov_format::PENDING_SLOT_HEADER as u64,
            ))?;
            self.file.read_exact(&mut self.cur)?;
        }
        let n = buf.len().min(self.cur.len() - self.pos);
        buf[..n].copy_from_slice(&self.cur[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

/// Wraps `raw` in the decoder for `c`.
pub(crate) fn decompress(
    raw: Box<dyn Read + Send>,
    c: Compression,
) -> io::Result<Box<dyn Read + Send>> {
    Ok(match c {
        Compression::None => raw,
        Compression::Zstd => Box::new(Context {
            inner: zstd::stream::read::Decoder::new(raw)?,
            what: "zstd decompression failed (corrupt or truncated .zst file?)",
        }),
        Compression::Gzip => Box::new(Context {
            inner: flate2::read::MultiGzDecoder::new(BufReader::with_capacity(64 * 1024, raw)),
            what: "gzip decompression failed (corrupt or truncated .gz file?)",
        }),
    })
}

/// Opens an input's stored bytes: a file's bytes as they are on disk (compressed or not),
/// or a member's bytes as they were stored.
pub fn open_raw(path: &Path) -> Result<Box<dyn Read + Send>, Error> {
    match File::open(path) {
        Ok(f) => {
            // A directory opens on Linux; reading it fails with a clear EISDIR later.
            Ok(Box::new(f))
        }
        Err(e) => match merged::find_member(path) {
            Some(found) => {
                let (archive, i) = found?;
                archive.open_member(i)
            }
            None => Err(Error::io(path, e)),
        },
    }
}

/// Reads a whole input (decompressed) into memory.
pub fn read_all(path: &Path) -> Result<Vec<u8>, Error> {
    let mut r = open(path)?;
    let mut v = Vec::new();
    r.read_to_end(&mut v).map_err(|e| Error::io(path, e))?;
    Ok(v)
}

/// [`read_all`] of a file that is never longer than `max` bytes (decompressed): a longer
/// one is an error (of kind `InvalidData`) after reading `max + 1` bytes of it.
pub fn read_all_max(path: &Path, max: u64, what: &str) -> Result<Vec<u8>, Error> {
    let mut v = Vec::new();
    open(path)?
        .take(max + 1)
        .read_to_end(&mut v)
        .map_err(|e| Error::io(path, e))?;
    if v.len() as u64 > max {
        return Err(Error::io(
            path,
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("longer than any {what} ({} MiB): not read", max >> 20),
            ),
        ));
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(
            classify_input(Path::new("d/x.trace.csv.zst")),
            Some((FileRole::Trace, Encoding::Csv))
        );
        assert_eq!(
            classify_input(Path::new("x.meta.json.gz")),
            Some((FileRole::Meta, Encoding::Json))
        );
        assert_eq!(classify_input(Path::new("x.csv.gz")), None);
        assert_eq!(Compression::of_path(Path::new("a.gz")), Compression::Gzip);
        assert_eq!(Compression::of_path(Path::new("a.zst")), Compression::Zstd);
        assert_eq!(Compression::of_path(Path::new("a.csv")), Compression::None);
    }

    /// A sidecar with `slots` (state word, at, records), slot size 4096 after a 4096-byte
    /// header page.
    fn sidecar(slots: &[(u64, u64, &[u8])]) -> Vec<u8> {
        let mut v = h5prov_format::pending_header(4096, 4096).to_vec();
        v.resize(4096, 0);
        for (state, at, data) in slots {
            let mut s = vec![0u8; 4096];
            s[..8].copy_from_slice(&state.to_le_bytes());
            s[8..16].copy_from_slice(&at.to_le_bytes());
            s[64..64 + data.len()].copy_from_slice(data);
            v.extend(s);
        }
        v
    }

    #[test]
    fn a_trace_and_its_sidecar_read_as_one_trace() {
        let dir = std::env::temp_dir().join(format!("h5prov-pending-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let trace = dir.join("p.trace.csv");
        let side = dir.join("p.pending");
        // Filling slots: their records come after the trace.
        std::fs::write(&trace, b"seq\n0\n1\n").unwrap();
        std::fs::write(
            &side,
            sidecar(&[(4, 0, b"2\n3\n"), (0, 0, b""), (2, 0, b"4\n")]),
        )
        .unwrap();
        assert_eq!(read_all(&trace).unwrap(), b"seq\n0\n1\n2\n3\n4\n");
        // Killed while writing a slot at offset 8: the trace's bytes from there are a
        // (here partial) copy of the slot, read from the slot instead.
        std::fs::write(&trace, b"seq\n0\n1\n2\n3").unwrap();
        let draining = h5prov_format::PENDING_DRAINING | 4;
        std::fs::write(&side, sidecar(&[(2, 0, b"5\n"), (draining, 8, b"2\n3\n")])).unwrap();
        assert_eq!(read_all(&trace).unwrap(), b"seq\n0\n1\n5\n2\n3\n");
        // Killed after the write, before the slot was emptied: the same.
        std::fs::write(&trace, b"seq\n0\n1\n2\n3\n").unwrap();
        assert_eq!(read_all(&trace).unwrap(), b"seq\n0\n1\n5\n2\n3\n");
        // A corrupt slot length is named.
        std::fs::write(&side, sidecar(&[(5000, 0, b"")])).unwrap();
        let e = read_all(&trace).unwrap_err().to_string();
        assert!(
            e.contains("p.pending") && e.contains("corrupt sidecar"),
            "{e}"
        );
        std::fs::write(&side, b"H5PROVB1").unwrap();
        let e = read_all(&trace).unwrap_err().to_string();
        assert!(e.contains("p.pending") && e.contains("H5PROVP1"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn decompressors_round_trip_and_name_the_problem() {
        let text = b"seq,op\n1,x\n".repeat(1000);
        let z = zstd::bulk::compress(&text, 3).unwrap();
        let mut out = Vec::new();
        decompress(Box::new(io::Cursor::new(z.clone())), Compression::Zstd)
            .unwrap()
            .read_to_end(&mut out)
            .unwrap();
        assert_eq!(out, text);
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        io::Write::write_all(&mut gz, &text).unwrap();
        let gz = gz.finish().unwrap();
        out.clear();
        decompress(Box::new(io::Cursor::new(gz.clone())), Compression::Gzip)
            .unwrap()
            .read_to_end(&mut out)
            .unwrap();
        assert_eq!(out, text);
        for (data, c, what) in [
            (z[..z.len() / 2].to_vec(), Compression::Zstd, "zstd"),
            (gz[..gz.len() / 2].to_vec(), Compression::Gzip, "gzip"),
            (b"not compressed".to_vec(), Compression::Zstd, "zstd"),
        ] {
            let e = decompress(Box::new(io::Cursor::new(data)), c)
                .unwrap()
                .read_to_end(&mut Vec::new())
                .unwrap_err();
            assert!(e.to_string().contains(what), "{e}");
        }
    }
}

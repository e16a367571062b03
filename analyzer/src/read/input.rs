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
/// `path` is a file or `<merged file>/<member name>`. Errors name `path`.
pub fn open(path: &Path) -> Result<Box<dyn Read + Send>, Error> {
    let raw = open_raw(path)?;
    decompress(raw, Compression::of_path(path)).map_err(|e| Error::io(path, e))
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

//! Reading trace directories: discovery, the CSV and JSONL record readers, objects and
//! metadata files, and the error/diagnostic types they share.
//!
//! Every reader streams: it hands one borrowed [`RecordRef`](crate::record::RecordRef) at a
//! time to a callback and keeps nothing. A truncated last line (no final newline and not a
//! valid row: the process was killed) is counted in [`FileDiag`]; any other malformed row
//! is an [`Error::Malformed`] naming the file and line, unless [`ReadOptions::lenient`].

pub mod csv_trace;
pub mod jsonl_trace;
pub mod objects;

use h5prov_format::{classify, Encoding, FileRole};
use std::fmt;
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// How strict the readers are.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReadOptions {
    /// Count and skip malformed rows instead of failing (`--lenient`).
    pub lenient: bool,
}

/// An error that stops the analysis. Messages name the file, the line, and the flag that
/// changes the behaviour, where one does.
#[derive(Debug)]
pub enum Error {
    /// A file could not be read or written.
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: io::Error,
    },
    /// A row that is not valid and is not a truncated last line.
    Malformed {
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line: u64,
        /// What is wrong.
        reason: String,
    },
    /// The input path holds no h5prov trace, objects or meta files.
    NoInput {
        /// The directory given.
        path: PathBuf,
    },
    /// Anything else (bad flag values...).
    Other(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io { path, source } => write!(f, "{}: {}", path.display(), source),
            Error::Malformed { path, line, reason } => write!(
                f,
                "{}:{}: malformed row: {} (rerun with --lenient to count and skip malformed rows)",
                path.display(),
                line,
                reason
            ),
            Error::NoInput { path } => write!(
                f,
                "{}: no h5prov files found (expected *.trace.csv, *.trace.jsonl, *.objects.csv, \
                 *.objects.jsonl or *.meta.json, searched recursively)",
                path.display()
            ),
            Error::Other(s) => f.write_str(s),
        }
    }
}

impl std::error::Error for Error {}

impl Error {
    pub(crate) fn io(path: &Path, source: io::Error) -> Self {
        Error::Io {
            path: path.to_path_buf(),
            source,
        }
    }

    /// The file an error is about, for choosing deterministically among parallel errors.
    pub fn sort_key(&self) -> (String, u64) {
        match self {
            Error::Io { path, .. } | Error::NoInput { path } => (path.display().to_string(), 0),
            Error::Malformed { path, line, .. } => (path.display().to_string(), *line),
            Error::Other(s) => (s.clone(), 0),
        }
    }
}

/// What reading one file found besides its rows.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileDiag {
    /// Valid rows read.
    pub rows: u64,
    /// Line of a truncated last line, if there was one.
    pub truncated_line: Option<u64>,
    /// Malformed rows skipped (only with `--lenient`).
    pub malformed: u64,
    /// The first malformed row: line and reason.
    pub first_malformed: Option<(u64, String)>,
}

impl FileDiag {
    /// Handles a row that failed to parse: a truncated last line, a counted skip, or an error.
    pub(crate) fn bad_row(
        &mut self,
        path: &Path,
        line: u64,
        reason: String,
        is_last_unterminated: bool,
        opts: &ReadOptions,
    ) -> Result<(), Error> {
        if is_last_unterminated {
            self.truncated_line = Some(line);
            return Ok(());
        }
        if !opts.lenient {
            return Err(Error::Malformed {
                path: path.to_path_buf(),
                line,
                reason,
            });
        }
        self.malformed += 1;
        if self.first_malformed.is_none() {
            self.first_malformed = Some((line, reason));
        }
        Ok(())
    }
}

/// One h5prov file found under the input directory.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct InputFile {
    /// Its path.
    pub path: PathBuf,
    /// Its size in bytes (for progress).
    pub size: u64,
}

/// All h5prov files under a directory, sorted by path.
#[derive(Debug, Clone, Default)]
pub struct Inputs {
    /// Trace files and their encoding.
    pub traces: Vec<(InputFile, Encoding)>,
    /// Objects files and their encoding.
    pub objects: Vec<(InputFile, Encoding)>,
    /// `meta.json` files.
    pub metas: Vec<InputFile>,
}

impl Inputs {
    /// Total bytes of all files.
    pub fn total_bytes(&self) -> u64 {
        self.traces.iter().map(|(f, _)| f.size).sum::<u64>()
            + self.objects.iter().map(|(f, _)| f.size).sum::<u64>()
            + self.metas.iter().map(|f| f.size).sum::<u64>()
    }
}

/// Finds every trace, objects and meta file under `root` (recursively; the `dirs=N` fan-out
/// puts them in `dNNNN/` subdirectories). `root` may also be a single file. Symbolic links
/// to directories are not followed.
pub fn discover(root: &Path) -> Result<Inputs, Error> {
    let mut inputs = Inputs::default();
    let meta = std::fs::metadata(root).map_err(|e| Error::io(root, e))?;
    if meta.is_file() {
        add_file(&mut inputs, root, meta.len());
    } else {
        walk(root, &mut inputs)?;
    }
    if inputs.traces.is_empty() && inputs.objects.is_empty() && inputs.metas.is_empty() {
        return Err(Error::NoInput {
            path: root.to_path_buf(),
        });
    }
    inputs.traces.sort_by(|a, b| a.0.cmp(&b.0));
    inputs.objects.sort_by(|a, b| a.0.cmp(&b.0));
    inputs.metas.sort();
    Ok(inputs)
}

fn add_file(inputs: &mut Inputs, path: &Path, size: u64) {
    let f = InputFile {
        path: path.to_path_buf(),
        size,
    };
    match classify(path) {
        Some((FileRole::Trace, enc)) => inputs.traces.push((f, enc)),
        Some((FileRole::Objects, enc)) => inputs.objects.push((f, enc)),
        Some((FileRole::Meta, _)) => inputs.metas.push(f),
        None => {}
    }
}

fn walk(dir: &Path, inputs: &mut Inputs) -> Result<(), Error> {
    let rd = std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))?;
    for entry in rd {
        let entry = entry.map_err(|e| Error::io(dir, e))?;
        let path = entry.path();
        let ft = entry.file_type().map_err(|e| Error::io(&path, e))?;
        if ft.is_dir() {
            walk(&path, inputs)?;
        } else if ft.is_file() || ft.is_symlink() {
            if let Ok(m) = std::fs::metadata(&path) {
                if m.is_file() {
                    add_file(inputs, &path, m.len());
                }
            }
        }
    }
    Ok(())
}

/// Whether a file is empty or ends with `\n` (a writer killed mid-row leaves no newline).
pub(crate) fn ends_with_newline(path: &Path) -> Result<bool, Error> {
    let mut f = File::open(path).map_err(|e| Error::io(path, e))?;
    let len = f.metadata().map_err(|e| Error::io(path, e))?.len();
    if len == 0 {
        return Ok(true);
    }
    f.seek(SeekFrom::Start(len - 1))
        .map_err(|e| Error::io(path, e))?;
    let mut b = [0u8; 1];
    f.read_exact(&mut b).map_err(|e| Error::io(path, e))?;
    Ok(b[0] == b'\n')
}

/// Parses an unsigned decimal field; empty means "not known" and reads as 0.
#[inline]
pub(crate) fn parse_u64(b: &[u8]) -> Option<u64> {
    let mut v: u64 = 0;
    for &c in b {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(d as u64)?;
    }
    Some(v)
}

/// Parses a signed decimal field; empty reads as `empty`.
#[inline]
pub(crate) fn parse_i64(b: &[u8], empty: i64) -> Option<i64> {
    match b {
        [] => Some(empty),
        [b'-', rest @ ..] if !rest.is_empty() => parse_u64(rest)
            .and_then(|v| i64::try_from(v).ok())
            .map(|v| -v),
        _ => parse_u64(b).and_then(|v| i64::try_from(v).ok()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers() {
        assert_eq!(parse_u64(b""), Some(0));
        assert_eq!(parse_u64(b"123"), Some(123));
        assert_eq!(parse_u64(b"18446744073709551615"), Some(u64::MAX));
        assert_eq!(parse_u64(b"18446744073709551616"), None);
        assert_eq!(parse_u64(b"1a"), None);
        assert_eq!(parse_u64(b"-1"), None);
        assert_eq!(parse_i64(b"-1", 0), Some(-1));
        assert_eq!(parse_i64(b"", -1), Some(-1));
        assert_eq!(parse_i64(b"-", 0), None);
        assert_eq!(parse_i64(b"42", 0), Some(42));
    }
}

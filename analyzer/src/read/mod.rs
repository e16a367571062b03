//! Reading trace directories: discovery, the CSV, JSONL and binary record readers, objects and
//! metadata files, and the error/diagnostic types they share.
//!
//! An input is a directory (searched recursively), one file, or a merged file written by
//! `h5prov merge` ([`merged`]); files may be compressed (`*.zst`, `*.gz`). Readers take a
//! path; [`input::open`] turns it into a decompressed byte stream, including the
//! `<merged file>/<member>` paths of merged files.
//!
//! Every reader streams: it hands one borrowed [`RecordRef`](crate::read::record::RecordRef) at a
//! time to a callback and keeps nothing. A truncated last line (no final newline and not a
//! valid row: the process was killed) is counted in [`FileDiag`]; any other malformed row
//! is an [`Error::Malformed`] naming the file and line, unless [`ReadOptions::lenient`].

pub mod bin_trace;
mod csv_records;
pub mod csv_trace;
pub mod input;
pub mod jsonl_trace;
pub mod merged;
pub mod objects;
pub mod rebuild;
pub mod record;
pub mod stream_capture;
mod swar;

use h5prov_format::{Encoding, FileRole};
use input::classify_input;
use std::fmt;
use std::io;
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
    /// A `meta.json` written by a newer h5prov than this analyzer understands.
    NewerFormat {
        /// The meta file.
        path: PathBuf,
        /// Its `format_version`.
        found: u32,
        /// The newest version this analyzer reads ([`h5prov_format::FORMAT_VERSION`]).
        supported: u32,
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
            Error::NewerFormat {
                path,
                found,
                supported,
            } => write!(
                f,
                "{}: format_version {found} is newer than this analyzer understands (version \
                 {supported}); use the h5prov analyzer of the h5prov that wrote the trace, or \
                 rerun with --lenient to read it as version {supported} anyway",
                path.display()
            ),
            Error::NoInput { path } => write!(
                f,
                "{}: no h5prov files found (expected *.trace.csv, *.trace.jsonl, *.trace.bin, \
                 *.objects.csv, *.objects.jsonl, *.objects.bin, *.meta.json or stream \
                 captures collect-*.jsonl, optionally .zst or .gz, searched recursively)",
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
            Error::Io { path, .. } | Error::NoInput { path } | Error::NewerFormat { path, .. } => {
                (path.display().to_string(), 0)
            }
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
    /// Bytes of the complete lines after the header (decompressed, up to and including the
    /// last `\n`): what the connector counts as the meta's `bytes_written`. A truncated last
    /// line is not counted.
    pub data_bytes: u64,
    /// The file's pending sidecar was read too ([`input::pending_of`]): its process ended
    /// without closing HDF5, and its buffered records were recovered.
    pub recovered: bool,
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

/// Streams the records of a trace file in encoding `enc` to `sink`, with each record's
/// line number (a binary record's is the line it would have in the CSV trace).
pub fn read_trace_lines(
    path: &Path,
    enc: Encoding,
    opts: &ReadOptions,
    mut sink: impl FnMut(u64, &crate::read::record::RecordRef<'_>),
) -> Result<FileDiag, Error> {
    let recovered = input::recovered(path);
    let mut d = match enc {
        Encoding::Csv => csv_trace::read_csv_trace_lines(path, opts, sink),
        Encoding::Bin => bin_trace::read_bin_trace_lines(path, opts, &mut sink),
        _ => jsonl_trace::read_jsonl_trace_lines(path, opts, sink),
    }?;
    d.recovered = recovered;
    Ok(d)
}

/// [`read_trace_lines`] without the line numbers.
pub fn read_trace(
    path: &Path,
    enc: Encoding,
    opts: &ReadOptions,
    sink: impl FnMut(&crate::read::record::RecordRef<'_>),
) -> Result<FileDiag, Error> {
    let recovered = input::recovered(path);
    let mut d = match enc {
        Encoding::Csv => csv_trace::read_csv_trace(path, opts, sink),
        Encoding::Bin => bin_trace::read_bin_trace(path, opts, sink),
        _ => jsonl_trace::read_jsonl_trace(path, opts, sink),
    }?;
    d.recovered = recovered;
    Ok(d)
}

/// One h5prov file found under the input directory.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct InputFile {
    /// Its path.
    pub path: PathBuf,
    /// Its size in bytes as stored (for progress): on disk, or compressed in a merged file.
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
    /// Stream captures (`collect-*.jsonl`, written by `h5prov collect --out`).
    pub streams: Vec<InputFile>,
    /// Subdirectories that could not be listed, and why: skipped (only with `--lenient`,
    /// see [`discover_with`]).
    pub unreadable_dirs: Vec<(PathBuf, String)>,
}

impl Inputs {
    /// Total bytes of all files.
    pub fn total_bytes(&self) -> u64 {
        self.traces.iter().map(|(f, _)| f.size).sum::<u64>()
            + self.objects.iter().map(|(f, _)| f.size).sum::<u64>()
            + self.metas.iter().map(|f| f.size).sum::<u64>()
            + self.streams.iter().map(|f| f.size).sum::<u64>()
    }
}

/// Finds every trace, objects and meta file under `root` (recursively; the `dirs=N` fan-out
/// puts them in `dNNNN/` subdirectories), compressed ones (`*.zst`, `*.gz`) included.
/// `root` may also be a single file or a merged file (`h5prov merge`), whose members are
/// listed as `<root>/<member name>`. Merged files inside a directory are not read (a merged
/// file written into the directory it was made from would count everything twice).
/// Symbolic links to directories are not followed. A subdirectory that cannot be listed
/// (permission denied) is an error naming it.
pub fn discover(root: &Path) -> Result<Inputs, Error> {
    discover_with(root, &ReadOptions::default())
}

/// [`discover`]; with `opts.lenient`, a subdirectory that cannot be listed is skipped and
/// named in [`Inputs::unreadable_dirs`] instead (`root` itself must be readable).
pub fn discover_with(root: &Path, opts: &ReadOptions) -> Result<Inputs, Error> {
    let mut inputs = Inputs::default();
    let meta = std::fs::metadata(root).map_err(|e| Error::io(root, e))?;
    if meta.is_file() {
        if merged::is_merged_file(root)? {
            let a = merged::open_archive(root)?;
            for (i, m) in a.members().iter().enumerate() {
                add_input(
                    &mut inputs,
                    a.member_path(i),
                    m.length,
                    (m.role, m.encoding),
                );
            }
        } else if stream_capture::is_capture(root) {
            inputs.streams.push(InputFile {
                path: root.to_path_buf(),
                size: meta.len(),
            });
        } else if let Some(class) = classify_input(root) {
            add_input(&mut inputs, root.to_path_buf(), meta.len(), class);
        } else {
            return Err(Error::io(
                root,
                io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "not an h5prov file: expected a trace directory, a merged file \
                     (`h5prov merge`), or a *.trace.csv, *.trace.jsonl, *.trace.bin, \
                     *.objects.csv, *.objects.jsonl, *.objects.bin or *.meta.json file, \
                     or a stream capture collect-*.jsonl (optionally .zst or .gz)",
                ),
            ));
        }
    } else {
        let rd = std::fs::read_dir(root).map_err(|e| Error::io(root, e))?;
        walk(root, rd, &mut inputs, opts)?;
    }
    if inputs.traces.is_empty()
        && inputs.objects.is_empty()
        && inputs.metas.is_empty()
        && inputs.streams.is_empty()
    {
        return Err(Error::NoInput {
            path: root.to_path_buf(),
        });
    }
    inputs.traces.sort_by(|a, b| a.0.cmp(&b.0));
    inputs.objects.sort_by(|a, b| a.0.cmp(&b.0));
    inputs.metas.sort();
    inputs.streams.sort();
    inputs.unreadable_dirs.sort();
    Ok(inputs)
}

fn add_input(inputs: &mut Inputs, path: PathBuf, size: u64, class: (FileRole, Encoding)) {
    let f = InputFile { path, size };
    match class {
        (FileRole::Trace, enc) => inputs.traces.push((f, enc)),
        (FileRole::Objects, enc) => inputs.objects.push((f, enc)),
        (FileRole::Meta, _) => inputs.metas.push(f),
    }
}

fn walk(
    dir: &Path,
    rd: std::fs::ReadDir,
    inputs: &mut Inputs,
    opts: &ReadOptions,
) -> Result<(), Error> {
    for entry in rd {
        let entry = entry.map_err(|e| Error::io(dir, e))?;
        let path = entry.path();
        let ft = entry.file_type().map_err(|e| Error::io(&path, e))?;
        if ft.is_dir() {
            match std::fs::read_dir(&path) {
                Ok(sub) => walk(&path, sub, inputs, opts)?,
                Err(e) if opts.lenient => inputs.unreadable_dirs.push((path, e.to_string())),
                Err(e) => {
                    return Err(Error::Other(format!(
                        "{}: {e}: cannot list this directory (rerun with --lenient to skip \
                         the directories that cannot be read)",
                        path.display()
                    )))
                }
            }
        } else if ft.is_file() || ft.is_symlink() {
            if stream_capture::is_capture(&path) {
                if let Ok(m) = std::fs::metadata(&path) {
                    if m.is_file() {
                        inputs.streams.push(InputFile {
                            path,
                            size: m.len(),
                        });
                    }
                }
                continue;
            }
            let Some(class) = classify_input(&path) else {
                continue;
            };
            if let Ok(m) = std::fs::metadata(&path) {
                if m.is_file() {
                    add_input(inputs, path, m.len(), class);
                }
            }
        }
    }
    Ok(())
}

/// A small deterministic random generator for the readers' tests (xorshift64): each
/// call `next(n)` gives a number in `0..n`.
#[cfg(test)]
pub(crate) fn test_rng(seed: u64) -> impl FnMut(usize) -> usize {
    let mut x = seed;
    move |n: usize| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x % n as u64) as usize
    }
}

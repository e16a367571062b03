//! Merged files: every per-process file of a run in one compressed file (`h5prov merge`),
//! read back by every command exactly as the directory it was made from.
//!
//! Layout (all integers little-endian; `docs/TRACE-FORMAT.md`, "Merged file"):
//!
//! ```text
//! header   16 B   MAGIC (8) | version u32 | flags u32 (0)
//! members         each member: its bytes as one or more zstd frames (with checksums)
//! index           one zstd frame: JSON {"format","version","generator","members":[...]}
//! trailer  32 B   index offset u64 | index length u64 | version u32 | 0 u32 | TRAILER_MAGIC (8)
//! ```
//!
//! A member's bytes are the file's bytes exactly as they were on disk (a `*.gz` member holds
//! gzip data), under its path relative to the merged directory, so nothing is lost: a
//! truncated last line is still a truncated last line. Members are independent frames, so
//! readers decode them in parallel; the index gives each one's offset and length.

use super::input::classify_input;
use super::{Error, Inputs};
use h5prov_format::{Encoding, FileRole};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::SystemTime;

/// First 8 bytes of a merged file. The non-ASCII first byte and the final `\n` catch text
/// transfers that would corrupt it (as in PNG).
pub const MAGIC: [u8; 8] = *b"\x89H5PROV\n";
/// Last 8 bytes of a complete merged file.
pub const TRAILER_MAGIC: [u8; 8] = *b"H5PROVIX";
/// The merged-file format version this build writes and reads.
pub const VERSION: u32 = 1;
/// Size of the header.
pub const HEADER_LEN: u64 = 16;
/// Size of the trailer.
pub const TRAILER_LEN: u64 = 32;
/// The `format` value of the index.
pub const INDEX_FORMAT: &str = "h5prov-merged";
/// The customary file-name extension (`run.h5prov`).
pub const EXTENSION: &str = "h5prov";
/// Members are cut into frames of at most this many bytes, compressed in parallel.
pub const FRAME_BYTES: usize = 4 << 20;
/// Largest index accepted (compressed or not), against corrupt lengths.
const MAX_INDEX_BYTES: u64 = 1 << 30;

/// One member of a merged file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    /// Path relative to the merged directory, `/`-separated (`d0001/h5prov-r3-p1003.trace.csv`).
    pub name: String,
    /// Which per-process file it is.
    pub role: FileRole,
    /// Its text encoding.
    pub encoding: Encoding,
    /// Offset of its first zstd frame in the merged file.
    pub offset: u64,
    /// Bytes of its zstd frames.
    pub length: u64,
    /// Bytes of the member itself (after zstd decoding).
    pub size: u64,
    /// A trace of a process that ended without closing HDF5: the merge stored the trace
    /// file and its pending sidecar's records as one trace (see [`merge`]), and the
    /// sidecar's presence is remembered here.
    pub recovered: bool,
}

#[derive(Serialize, Deserialize)]
struct IndexDoc {
    format: String,
    version: u32,
    generator: String,
    members: Vec<IndexEntry>,
}

#[derive(Serialize, Deserialize)]
struct IndexEntry {
    name: String,
    role: String,
    encoding: String,
    offset: u64,
    length: u64,
    size: u64,
    /// [`Member::recovered`]; absent (false) in merged files of older versions.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    recovered: bool,
}

fn role_name(r: FileRole) -> &'static str {
    match r {
        FileRole::Trace => "trace",
        FileRole::Objects => "objects",
        FileRole::Meta => "meta",
    }
}

fn encoding_name(e: Encoding) -> &'static str {
    match e {
        Encoding::Csv => "csv",
        Encoding::Jsonl => "jsonl",
        Encoding::Json => "json",
        Encoding::Bin => "bin",
    }
}

/// `(length, mtime)`: a merged file whose stamp changed is read again.
type Stamp = (u64, Option<SystemTime>);

fn stamp(m: &std::fs::Metadata) -> Stamp {
    (m.len(), m.modified().ok())
}

/// An opened merged file: its path and index.
#[derive(Debug)]
pub struct Archive {
    path: PathBuf,
    members: Vec<Member>,
    by_name: HashMap<String, usize>,
    stamp: Stamp,
}

fn invalid(path: &Path, msg: impl Into<String>) -> Error {
    Error::io(path, io::Error::new(io::ErrorKind::InvalidData, msg.into()))
}

fn corrupt(path: &Path, what: impl std::fmt::Display) -> Error {
    invalid(path, format!("corrupt h5prov merged file: {what}"))
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

/// Whether `path` starts with [`MAGIC`].
pub fn has_magic(path: &Path) -> Result<bool, Error> {
    let mut f = File::open(path).map_err(|e| Error::io(path, e))?;
    let mut b = [0u8; 8];
    let mut n = 0;
    while n < b.len() {
        match f.read(&mut b[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(Error::io(path, e)),
        }
    }
    Ok(n == b.len() && b == MAGIC)
}

/// Whether a regular file is meant as a merged file: it has the magic, or the
/// [`EXTENSION`] (then a wrong file gets a clear error rather than being ignored).
pub fn is_merged_file(path: &Path) -> Result<bool, Error> {
    Ok(path.extension().is_some_and(|e| e == EXTENSION) || has_magic(path)?)
}

/// A member name from a relative path: normal components joined with `/`.
fn member_name(rel: &Path) -> Option<String> {
    let mut parts = Vec::new();
    for c in rel.components() {
        match c {
            Component::Normal(s) => parts.push(s.to_str()?),
            _ => return None,
        }
    }
    (!parts.is_empty()).then(|| parts.join("/"))
}

fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .split('/')
            .all(|p| !p.is_empty() && p != "." && p != ".." && !p.contains('\0'))
}

impl Archive {
    /// Reads and checks the header, trailer and index of a merged file.
    pub fn read(path: &Path) -> Result<Archive, Error> {
        let mut f = File::open(path).map_err(|e| Error::io(path, e))?;
        let meta = f.metadata().map_err(|e| Error::io(path, e))?;
        let len = meta.len();
        let mut head = [0u8; HEADER_LEN as usize];
        let n = read_full(&mut f, &mut head).map_err(|e| Error::io(path, e))?;
        if n < 8 || head[..8] != MAGIC {
            return Err(invalid(
                path,
                "not an h5prov merged file (it does not start with the merged-file magic; \
                 `h5prov merge DIR -o FILE` writes one)",
            ));
        }
        if n < head.len() || len < HEADER_LEN + TRAILER_LEN {
            return Err(corrupt(
                path,
                format!("truncated: {len} bytes, shorter than its header and trailer"),
            ));
        }
        let version = u32_at(&head, 8);
        if version != VERSION {
            return Err(invalid(
                path,
                format!(
                    "h5prov merged file of format version {version}; this h5prov reads version \
                     {VERSION}"
                ),
            ));
        }
        let mut tail = [0u8; TRAILER_LEN as usize];
        f.seek(SeekFrom::Start(len - TRAILER_LEN))
            .and_then(|_| f.read_exact(&mut tail))
            .map_err(|e| Error::io(path, e))?;
        if tail[24..] != TRAILER_MAGIC {
            return Err(corrupt(
                path,
                "truncated: no index at its end (an interrupted copy or `h5prov merge`?)",
            ));
        }
        let (ix_off, ix_len) = (u64_at(&tail, 0), u64_at(&tail, 8));
        if u32_at(&tail, 16) != version {
            return Err(corrupt(path, "header and trailer versions differ"));
        }
        if ix_off < HEADER_LEN
            || ix_len > MAX_INDEX_BYTES
            || ix_off.checked_add(ix_len) != Some(len - TRAILER_LEN)
        {
            return Err(corrupt(
                path,
                format!("index at {ix_off}+{ix_len} does not end at the trailer ({len} bytes)"),
            ));
        }
        let mut zix = vec![0u8; ix_len as usize];
        f.seek(SeekFrom::Start(ix_off))
            .and_then(|_| f.read_exact(&mut zix))
            .map_err(|e| Error::io(path, e))?;
        let mut json = Vec::new();
        zstd::stream::read::Decoder::new(&zix[..])
            .and_then(|d| d.take(MAX_INDEX_BYTES).read_to_end(&mut json))
            .map_err(|e| corrupt(path, format!("index: {e}")))?;
        let doc: IndexDoc =
            serde_json::from_slice(&json).map_err(|e| corrupt(path, format!("index: {e}")))?;
        if doc.format != INDEX_FORMAT || doc.version != version {
            return Err(corrupt(
                path,
                format!("index says format {:?} version {}", doc.format, doc.version),
            ));
        }
        let mut members = Vec::with_capacity(doc.members.len());
        let mut by_name = HashMap::with_capacity(doc.members.len());
        for e in doc.members {
            let bad = |why: &str| corrupt(path, format!("member {:?}: {why}", e.name));
            if !valid_name(&e.name) {
                return Err(bad("not a relative path"));
            }
            let Some((role, encoding)) = classify_input(Path::new(&e.name)) else {
                return Err(bad("not an h5prov file name"));
            };
            if e.role != role_name(role) || e.encoding != encoding_name(encoding) {
                return Err(bad("role or encoding does not match its name"));
            }
            if e.offset < HEADER_LEN
                || e.length == 0
                || e.offset
                    .checked_add(e.length)
                    .is_none_or(|end| end > ix_off)
            {
                return Err(bad("its bytes are outside the members area"));
            }
            if by_name.insert(e.name.clone(), members.len()).is_some() {
                return Err(bad("stored twice"));
            }
            members.push(Member {
                name: e.name,
                role,
                encoding,
                offset: e.offset,
                length: e.length,
                size: e.size,
                recovered: e.recovered && role == FileRole::Trace,
            });
        }
        Ok(Archive {
            path: path.to_path_buf(),
            members,
            by_name,
            stamp: stamp(&meta),
        })
    }

    /// The merged file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Its members, in index order (sorted by name).
    pub fn members(&self) -> &[Member] {
        &self.members
    }

    /// The member called `name`.
    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.by_name.get(name).copied()
    }

    /// The path readers use for member `i`: `<merged file>/<name>`.
    pub fn member_path(&self, i: usize) -> PathBuf {
        self.path.join(&self.members[i].name)
    }

    /// Opens the stored bytes of member `i` (zstd-decoded, checked against the index).
    pub fn open_member(&self, i: usize) -> Result<Box<dyn Read + Send>, Error> {
        let m = &self.members[i];
        let mpath = self.member_path(i);
        let mut f = File::open(&self.path).map_err(|e| Error::io(&self.path, e))?;
        f.seek(SeekFrom::Start(m.offset))
            .map_err(|e| Error::io(&self.path, e))?;
        let frames = BufReader::with_capacity(128 * 1024, f.take(m.length));
        let dec =
            zstd::stream::read::Decoder::with_buffer(frames).map_err(|e| Error::io(&mpath, e))?;
        Ok(Box::new(MemberReader {
            inner: dec,
            got: 0,
            size: m.size,
        }))
    }
}

/// Decodes a member and checks that it has the size the index says.
struct MemberReader<R> {
    inner: R,
    got: u64,
    size: u64,
}

impl<R: Read> Read for MemberReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf).map_err(|e| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("corrupt member of h5prov merged file: {e}"),
            )
        })?;
        self.got += n as u64;
        if (n == 0 && !buf.is_empty() && self.got != self.size) || self.got > self.size {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "corrupt member of h5prov merged file: {} bytes decoded, the index says {}",
                    self.got, self.size
                ),
            ));
        }
        Ok(n)
    }
}

fn read_full(r: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

fn registry() -> &'static Mutex<HashMap<PathBuf, Arc<Archive>>> {
    static OPEN: OnceLock<Mutex<HashMap<PathBuf, Arc<Archive>>>> = OnceLock::new();
    OPEN.get_or_init(Default::default)
}

/// Opens a merged file, reusing its index when it was opened before and has not changed
/// (same length and modification time). Member paths (`<merged file>/<name>`) resolve
/// through this cache, so the index is read once however many members are read.
pub fn open_archive(path: &Path) -> Result<Arc<Archive>, Error> {
    let st = std::fs::metadata(path)
        .map(|m| stamp(&m))
        .map_err(|e| Error::io(path, e))?;
    let reg = registry();
    if let Some(a) = reg.lock().unwrap_or_else(|p| p.into_inner()).get(path) {
        if a.stamp == st {
            return Ok(a.clone());
        }
    }
    let a = Arc::new(Archive::read(path)?);
    reg.lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(path.to_path_buf(), a.clone());
    Ok(a)
}

/// Resolves `<merged file>/<member name>`: `None` when no ancestor of `path` is a merged
/// file, else the archive and member index (or an error naming `path`).
pub(crate) fn find_member(path: &Path) -> Option<Result<(Arc<Archive>, usize), Error>> {
    for anc in path.ancestors().skip(1) {
        if anc.as_os_str().is_empty() {
            return None;
        }
        match std::fs::metadata(anc) {
            Ok(m) if m.is_file() => {
                if !has_magic(anc).unwrap_or(false) {
                    return None;
                }
                let a = match open_archive(anc) {
                    Ok(a) => a,
                    Err(e) => return Some(Err(e)),
                };
                let name = member_name(path.strip_prefix(anc).ok()?)?;
                return Some(match a.index_of(&name) {
                    Some(i) => Ok((a, i)),
                    None => Err(Error::io(
                        path,
                        io::Error::new(
                            io::ErrorKind::NotFound,
                            format!("no member {name:?} in the merged file {}", anc.display()),
                        ),
                    )),
                });
            }
            Ok(_) => return None,
            Err(_) => continue,
        }
    }
    None
}

/// What [`merge`] wrote.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MergeStats {
    /// Members stored.
    pub members: usize,
    /// Bytes of the members.
    pub bytes_in: u64,
    /// Bytes of the merged file.
    pub bytes_out: u64,
}

/// Reads up to `FRAME_BYTES` from `r` (fewer only at its end).
fn read_chunk(r: &mut dyn Read, path: &Path) -> Result<Vec<u8>, Error> {
    let mut v = Vec::with_capacity(FRAME_BYTES);
    r.take(FRAME_BYTES as u64)
        .read_to_end(&mut v)
        .map_err(|e| Error::io(path, e))?;
    Ok(v)
}

/// The member name of an input found under `root`.
fn name_under(root: &Path, path: &Path) -> Result<String, Error> {
    let rel = match path.strip_prefix(root) {
        Ok(r) if !r.as_os_str().is_empty() => r,
        // `root` is the file itself.
        _ => Path::new(path.file_name().unwrap_or(path.as_os_str())),
    };
    member_name(rel).ok_or_else(|| {
        invalid(
            path,
            "cannot be stored in a merged file: its name is not UTF-8 or not relative",
        )
    })
}

struct Pending {
    member: usize,
    data: Vec<u8>,
}

/// Merges every input found under `root` (by [`super::discover`]) into the merged file
/// `out`, compressing with zstd `level` on the current rayon pool. The file is written
/// next to `out` under a temporary name and renamed when complete, with mode 0600 like
/// the trace files. `progress` receives the bytes of input read.
pub fn merge(
    root: &Path,
    inputs: &Inputs,
    out: &Path,
    level: i32,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<MergeStats, Error> {
    let mut files: Vec<(String, &Path, FileRole, Encoding)> = Vec::new();
    for (f, e) in &inputs.traces {
        files.push((name_under(root, &f.path)?, &f.path, FileRole::Trace, *e));
    }
    for (f, e) in &inputs.objects {
        files.push((name_under(root, &f.path)?, &f.path, FileRole::Objects, *e));
    }
    for f in &inputs.metas {
        files.push((
            name_under(root, &f.path)?,
            &f.path,
            FileRole::Meta,
            Encoding::Json,
        ));
    }
    files.sort_by(|a, b| a.0.cmp(&b.0));
    if let Some(w) = files.windows(2).find(|w| w[0].0 == w[1].0) {
        return Err(Error::Other(format!(
            "{}: two inputs would both be stored as {:?}",
            root.display(),
            w[0].0
        )));
    }
    let fname = out
        .file_name()
        .ok_or_else(|| Error::Other(format!("-o {}: not a file name", out.display())))?;
    let mut tmp_name = std::ffi::OsString::from(".");
    tmp_name.push(fname);
    tmp_name.push(format!(".{}.tmp", std::process::id()));
    let tmp = out.with_file_name(tmp_name);
    let result = write_merged(&files, &tmp, level, progress).and_then(|stats| {
        std::fs::rename(&tmp, out).map_err(|e| Error::io(out, e))?;
        Ok(stats)
    });
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

fn create_private(path: &Path) -> io::Result<File> {
    let mut o = std::fs::OpenOptions::new();
    o.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.mode(0o600);
    }
    o.open(path)
}

fn write_merged(
    files: &[(String, &Path, FileRole, Encoding)],
    tmp: &Path,
    level: i32,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<MergeStats, Error> {
    let io_err = |e: io::Error| Error::io(tmp, e);
    let f = create_private(tmp).map_err(io_err)?;
    let mut w = BufWriter::with_capacity(1 << 20, f);
    let mut head = Vec::with_capacity(HEADER_LEN as usize);
    head.extend_from_slice(&MAGIC);
    head.extend_from_slice(&VERSION.to_le_bytes());
    head.extend_from_slice(&0u32.to_le_bytes());
    w.write_all(&head).map_err(io_err)?;
    let mut offset = HEADER_LEN;
    let mut entries: Vec<IndexEntry> = Vec::with_capacity(files.len());
    let mut pending: Vec<Pending> = Vec::new();
    let mut pending_bytes = 0usize;
    let budget = FRAME_BYTES * 2 * rayon::current_num_threads().max(1);
    let mut flush = |pending: &mut Vec<Pending>,
                     entries: &mut Vec<IndexEntry>,
                     w: &mut BufWriter<File>|
     -> Result<(), Error> {
        let frames: Vec<io::Result<Vec<u8>>> = pending
            .par_iter()
            .map_init(
                || compressor(level),
                |c, p| match c {
                    Ok(c) => c.compress(&p.data),
                    Err(e) => Err(io::Error::new(e.kind(), e.to_string())),
                },
            )
            .collect();
        for (p, fr) in pending.drain(..).zip(frames) {
            let fr = fr.map_err(|e| {
                Error::Other(format!("compressing {}: {e}", files[p.member].1.display()))
            })?;
            let e = &mut entries[p.member];
            if e.length == 0 {
                e.offset = offset;
            }
            w.write_all(&fr).map_err(io_err)?;
            e.length += fr.len() as u64;
            e.size += p.data.len() as u64;
            offset += fr.len() as u64;
        }
        Ok(())
    };
    for (i, (name, path, role, enc)) in files.iter().enumerate() {
        entries.push(IndexEntry {
            name: name.clone(),
            role: role_name(*role).into(),
            encoding: encoding_name(*enc).into(),
            offset: 0,
            length: 0,
            size: 0,
            recovered: false,
        });
        // A trace with a pending sidecar (its process ended without closing HDF5) is
        // stored as the analyzer reads it: the trace, cut where the sidecar says, then the
        // sidecar's records ([`super::input::open`]), compressed again as its name says.
        let mut r = if *role == FileRole::Trace && super::input::pending_of(path).is_some() {
            entries[i].recovered = true;
            recompress(super::input::open(path)?, path)?
        } else {
            super::input::open_raw(path)?
        };
        let mut first = true;
        loop {
            let data = read_chunk(&mut r, path)?;
            let n = data.len();
            progress(n as u64);
            // Every member has at least one frame, even an empty one.
            if n > 0 || first {
                pending_bytes += n;
                pending.push(Pending { member: i, data });
            }
            first = false;
            if pending_bytes >= budget {
                flush(&mut pending, &mut entries, &mut w)?;
                pending_bytes = 0;
            }
            if n < FRAME_BYTES {
                break;
            }
        }
    }
    flush(&mut pending, &mut entries, &mut w)?;
    let bytes_in = entries.iter().map(|e| e.size).sum();
    let doc = IndexDoc {
        format: INDEX_FORMAT.into(),
        version: VERSION,
        generator: format!("h5prov {}", env!("CARGO_PKG_VERSION")),
        members: entries,
    };
    let json = serde_json::to_vec(&doc).map_err(|e| Error::Other(e.to_string()))?;
    let zix = compressor(level)
        .and_then(|mut c| c.compress(&json))
        .map_err(io_err)?;
    w.write_all(&zix).map_err(io_err)?;
    let mut tail = Vec::with_capacity(TRAILER_LEN as usize);
    tail.extend_from_slice(&offset.to_le_bytes());
    tail.extend_from_slice(&(zix.len() as u64).to_le_bytes());
    tail.extend_from_slice(&VERSION.to_le_bytes());
    tail.extend_from_slice(&0u32.to_le_bytes());
    tail.extend_from_slice(&TRAILER_MAGIC);
    w.write_all(&tail).map_err(io_err)?;
    let f = w.into_inner().map_err(|e| io_err(e.into_error()))?;
    f.sync_all().map_err(io_err)?;
    Ok(MergeStats {
        members: doc.members.len(),
        bytes_in,
        bytes_out: offset + zix.len() as u64 + TRAILER_LEN,
    })
}

/// The decompressed content `r` of input `path`, compressed again as its name says.
fn recompress(r: Box<dyn Read + Send>, path: &Path) -> Result<Box<dyn Read + Send>, Error> {
    use super::input::Compression;
    Ok(match Compression::of_path(path) {
        Compression::None => r,
        Compression::Zstd => {
            Box::new(zstd::stream::read::Encoder::new(r, 3).map_err(|e| Error::io(path, e))?)
        }
        Compression::Gzip => Box::new(flate2::read::GzEncoder::new(r, flate2::Compression::fast())),
    })
}

fn compressor(level: i32) -> io::Result<zstd::bulk::Compressor<'static>> {
    let mut c = zstd::bulk::Compressor::new(level)?;
    c.include_checksum(true)?;
    Ok(c)
}

/// The zstd levels `merge` accepts.
pub const LEVELS: std::ops::RangeInclusive<i32> = 1..=19;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::{discover, input};

    fn tempdir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("h5prov-unit-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn members_round_trip_byte_for_byte_across_frames() {
        let dir = tempdir("merged-frames");
        std::fs::create_dir_all(dir.join("d0001")).unwrap();
        // More than two frames, and a file that is empty.
        let big: Vec<u8> = (0..(FRAME_BYTES * 2 + 12345))
            .map(|i| b"0123456789,\n"[i % 12])
            .collect();
        std::fs::write(dir.join("d0001/h5prov-r1-p1.trace.csv"), &big).unwrap();
        std::fs::write(dir.join("h5prov-r0-p0.objects.csv"), b"").unwrap();
        std::fs::write(dir.join("h5prov-r0-p0.meta.json"), b"{\"pid\":0}").unwrap();
        std::fs::write(dir.join("unrelated.txt"), b"skipped").unwrap();
        let out = dir.join("all.h5prov");
        let inputs = discover(&dir).unwrap();
        let stats = merge(&dir, &inputs, &out, 3, &|_| {}).unwrap();
        assert_eq!(stats.members, 3);
        assert_eq!(stats.bytes_in, big.len() as u64 + 9);
        assert_eq!(stats.bytes_out, std::fs::metadata(&out).unwrap().len());
        let a = Archive::read(&out).unwrap();
        let names: Vec<&str> = a.members().iter().map(|m| m.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "d0001/h5prov-r1-p1.trace.csv",
                "h5prov-r0-p0.meta.json",
                "h5prov-r0-p0.objects.csv"
            ]
        );
        assert_eq!(a.members()[0].size, big.len() as u64);
        let back = discover(&out).unwrap();
        assert_eq!(
            back.traces[0].0.path,
            out.join("d0001/h5prov-r1-p1.trace.csv")
        );
        assert_eq!(input::read_all(&back.traces[0].0.path).unwrap(), big);
        assert_eq!(input::read_all(&back.objects[0].0.path).unwrap(), b"");
        assert_eq!(
            input::read_all(&back.metas[0].path).unwrap(),
            b"{\"pid\":0}"
        );
        // A member that is not there, named with the merged file.
        let e = input::open(&out.join("d0001/nope.trace.csv"))
            .err()
            .unwrap();
        assert!(
            e.to_string().contains("no member \"d0001/nope.trace.csv\""),
            "{e}"
        );
    }

    #[test]
    fn names_are_relative_paths() {
        assert!(valid_name("d0001/x.trace.csv"));
        for bad in ["", "/x", "a//b", "../x", "a/./b", "a/"] {
            assert!(!valid_name(bad), "{bad}");
        }
        assert_eq!(member_name(Path::new("a/b/c")).as_deref(), Some("a/b/c"));
        assert_eq!(member_name(Path::new("../c")), None);
        assert_eq!(member_name(Path::new("")), None);
    }
}

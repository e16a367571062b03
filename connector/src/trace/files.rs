//! The process's output files: the trace file and the objects file, each written in blocks
//! (one zstd frame a block with `format=bin`, stored rather than compressed when short),
//! and the set of files a session creates under one stem.

use crate::config::Format;
use h5prov_format::BinEncoder;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;

/// The trace file and its length (where the next block goes).
pub(super) struct TraceOut {
    pub(super) file: File,
    pub(super) len: u64,
    /// `format=bin`: each block is written as one zstd frame.
    pub(super) zstd: Option<Zstd>,
}

/// A zstd compressor and its output buffer, reused by every block of a file.
pub(super) struct Zstd {
    cx: zstd::bulk::Compressor<'static>,
    out: Vec<u8>,
}

/// The zstd level of trace and objects blocks: the fast level -3. Callgrind on the
/// metadata-heavy benchmark, instructions per HDF5 call over uncompressed blocks (14,839):
/// level 1 +793, -1 +672, -3 +549, -5 +496, -7 +464; the rest is zstd's sequence coding,
/// which no level removes (minMatch and hashLog change nothing either). Trace bytes a record
/// on an h5py script (3,000 datasets written, read and annotated, 135,079 records): 21.4
/// uncompressed, 8.6 at level 1, 9.1 at -1, 10.1 at -3, 10.8 at -5; -3 is the cheapest level
/// that keeps both workloads' traces more than 2x smaller (2.1x and 2.25x).
const ZSTD_LEVEL: i32 = -3;

impl Zstd {
    pub(super) fn new(format: Format) -> Option<Zstd> {
        if !format.compressed() {
            return None;
        }
        Some(Zstd {
            cx: zstd::bulk::Compressor::new(ZSTD_LEVEL).ok()?,
            out: Vec::new(),
        })
    }

    /// `data` as one zstd frame, or the error: compressed, or stored (a raw block) when
    /// it is shorter than [`STORE_BELOW`].
    pub(super) fn frame(&mut self, data: &[u8]) -> std::io::Result<&[u8]> {
        self.out.clear();
        if data.len() < STORE_BELOW {
            stored_frame(&mut self.out, data);
            return Ok(&self.out);
        }
        self.out
            .reserve(zstd::zstd_safe::compress_bound(data.len()));
        self.cx.compress_to_buffer(data, &mut self.out)?;
        Ok(&self.out)
    }
}

/// Blocks shorter than this many bytes are stored in their zstd frame, not compressed.
/// Compressing a block costs a fixed ~20k instructions (the compressor's reset and its
/// tables, whatever the size) and ~22 a byte on trace records (callgrind): a drain of a
/// few records at a file close (a trace block of ~250 bytes took 26k instructions, the
/// objects block of its summary rows 16k) cost as much as a few HDF5 calls, to save a
/// few hundred bytes. From 4 KiB on the fixed part is under a fifth of the whole. The
/// blocks of a running application (up to the buffer's threshold, 256 KiB by default)
/// are compressed as before.
pub(super) const STORE_BELOW: usize = 4096;

/// Appends `data` (shorter than [`STORE_BELOW`], so less than zstd's largest block) as a
/// zstd frame holding one raw block (RFC 8878, section 3.1.1): every zstd decoder reads
/// it, with no compressor involved.
fn stored_frame(out: &mut Vec<u8>, data: &[u8]) {
    const _: () = assert!(STORE_BELOW <= 128 << 10);
    // Magic number, little-endian.
    out.extend_from_slice(&0xFD2F_B528u32.to_le_bytes());
    // Frame header descriptor: a 4-byte content size (flag 2, bits 7-6), single segment
    // (bit 5: no window descriptor, the window is the content size), no checksum, no
    // dictionary.
    out.push(0b1010_0000);
    out.extend_from_slice(&(data.len() as u32).to_le_bytes());
    // Block header, 3 bytes little-endian: last block (bit 0), type raw (bits 1-2 = 0),
    // size (bits 3-23).
    let header = 1 | ((data.len() as u32) << 3);
    out.extend_from_slice(&header.to_le_bytes()[..3]);
    out.extend_from_slice(data);
}

/// Writes `data` to `file`, as one zstd frame when `zstd` is given; returns the bytes
/// written (the file's growth).
pub(super) fn write_block(
    file: &mut File,
    zstd: Option<&mut Zstd>,
    data: &[u8],
) -> std::io::Result<u64> {
    match zstd {
        Some(z) => {
            let frame = z.frame(data)?;
            file.write_all(frame)?;
            Ok(frame.len() as u64)
        }
        None => {
            file.write_all(data)?;
            Ok(data.len() as u64)
        }
    }
}

/// The objects file and its pending rows.
pub(super) struct Objects {
    pub(super) file: File,
    /// `format=bin`: each block is written as one zstd frame.
    pub(super) zstd: Option<Zstd>,
    /// Encoded rows, whole rows only.
    pub(super) buf: Vec<u8>,
    /// The binary encoding's block (`format=bin`): one per write of `buf`.
    pub(super) bin: BinEncoder,
}

/// Creates a process's files, `stem` + each of `suffixes`, all with one collision
/// suffix: the first `N` (none, then `.1`, `.2`, ...) for which none of them exists, so
/// that a process's trace, objects, meta and sidecar always share a stem (a suffix chosen
/// per file paired one process's trace with another's meta). Returns the stem used and
/// the files, in `suffixes` order; files of a set that collided are removed again.
pub(super) fn create_files(
    dir: &std::path::Path,
    stem: &str,
    suffixes: &[&str],
    mode: u32,
) -> std::io::Result<(String, Vec<File>)> {
    let mut last = None;
    'attempt: for attempt in 0..100 {
        let stem = if attempt == 0 {
            stem.to_string()
        } else {
            format!("{stem}.{attempt}")
        };
        let mut files = Vec::with_capacity(suffixes.len());
        for suffix in suffixes {
            let made = OpenOptions::new()
                .read(true)
                .write(true)
                .create_new(true)
                .custom_flags(libc::O_NOFOLLOW)
                .mode(mode)
                .open(dir.join(format!("{stem}{suffix}")));
            match made {
                Ok(f) => files.push(f),
                Err(e) => {
                    for done in &suffixes[..files.len()] {
                        let _ = std::fs::remove_file(dir.join(format!("{stem}{done}")));
                    }
                    if e.kind() == std::io::ErrorKind::AlreadyExists {
                        last = Some(e);
                        continue 'attempt;
                    }
                    return Err(e);
                }
            }
        }
        return Ok((stem, files));
    }
    Err(last.unwrap_or_else(|| std::io::Error::other("no free file name")))
}

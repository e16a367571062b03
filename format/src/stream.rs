//! The stream's wire forms (`docs/STREAMING.md`), shared by the connector that sends them
//! and `h5prov collect` that reads them: the event JSON line (`stream_format=jsonl`), and
//! the binary framing (`stream_format=bin`, the default at `stream_level=event`) that
//! carries the trace records in the binary trace encoding (`crate::bin`: the same
//! table, the same encoder and decoder as `*.trace.bin`).
//!
//! A binary connection (after the token handshake, when there is one):
//!
//! ```text
//! conn   = "H5PROVS" version:u8 frame*      version = STREAM_VERSION
//! frame  = u32le(len) kind:u8 payload[len]  len <= the collector's cap (1 MiB)
//! kind   = 'h'  payload: the `hello` JSON line (the process identity, once)
//!        | 'H'  payload: a binary trace header body (`write_bin_header` after the magic
//!               and its length: layout version, `trace`, the columns), once
//!        | 'r'  payload: one block of trace records (`u32le(0)` then records, as a
//!               `*.trace.bin` block); each frame decodes on its own
//! ```
//!
//! A JSON connection starts with `{` (its `hello` line); a collector tells them apart by
//! the first byte.

use crate::TraceRecordRef;

/// The first seven bytes of a binary stream connection; the eighth is [`STREAM_VERSION`].
pub const STREAM_MAGIC: &[u8; 7] = b"H5PROVS";

/// The version of the binary framing, the byte after [`STREAM_MAGIC`].
pub const STREAM_VERSION: u8 = 1;

/// Bytes before a frame's payload: its length (`u32` LE) and its kind.
pub const FRAME_HEAD: usize = 5;

/// Frame kind: the `hello` JSON line.
pub const FRAME_HELLO: u8 = b'h';
/// Frame kind: the binary trace header body.
pub const FRAME_HEADER: u8 = b'H';
/// Frame kind: one block of binary trace records.
pub const FRAME_RECORDS: u8 = b'r';

/// The connection preface: [`STREAM_MAGIC`] and [`STREAM_VERSION`].
pub fn stream_preface() -> [u8; 8] {
    let mut p = [0u8; 8];
    p[..7].copy_from_slice(STREAM_MAGIC);
    p[7] = STREAM_VERSION;
    p
}

/// Appends a frame head of kind `kind` whose length [`end_frame`] fills in; returns where
/// the frame starts.
pub fn begin_frame(out: &mut Vec<u8>, kind: u8) -> usize {
    let at = out.len();
    out.extend_from_slice(&[0, 0, 0, 0, kind]);
    at
}

/// Writes the length of the frame begun at `at` (its payload: what follows its head).
pub fn end_frame(out: &mut [u8], at: usize) {
    let len = (out.len() - at - FRAME_HEAD) as u32;
    out[at..at + 4].copy_from_slice(&len.to_le_bytes());
}

/// A whole frame of kind `kind` holding `payload`.
pub fn frame(kind: u8, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(FRAME_HEAD + payload.len());
    let at = begin_frame(&mut out, kind);
    out.extend_from_slice(payload);
    end_frame(&mut out, at);
    out
}

/// The header frame's payload: the trace table's binary header body.
pub fn trace_header_body() -> Vec<u8> {
    let mut h = Vec::new();
    TraceRecordRef::write_bin_header(&mut h);
    h.split_off(crate::BIN_MAGIC.len() + 4)
}

/// `"job_id":..,"rank":..,"pid":..,"host":..` (no braces): the process identity every
/// JSON message starts with, after its `"v"` and `"type"`.
pub fn ident_json(job_id: &str, rank: i64, pid: u32, host: &str) -> String {
    use crate::{write_json_fields, JsonValue};
    let mut ident = Vec::new();
    write_json_fields(
        &mut ident,
        b"",
        &[
            (b"\"job_id\":", JsonValue::Text(job_id)),
            (b",\"rank\":", JsonValue::Signed(rank)),
            (b",\"pid\":", JsonValue::Unsigned(pid.into())),
            (b",\"host\":", JsonValue::Text(host)),
        ],
        b"",
    );
    String::from_utf8(ident).unwrap_or_default()
}

/// One `event` JSON line: the record's fields after the process's `prefix`
/// (`{"v":1,"type":"event","job_id":..,"rank":..,"pid":..,"host":..`), written by the
/// format's JSON writer, in straight-line code.
#[inline]
pub fn write_event_json(out: &mut Vec<u8>, prefix: &[u8], r: &TraceRecordRef<'_>) {
    crate::write_json_line!(out, prefix, {
        seq = r.seq,
        tid = r.tid,
        start_ns = r.start_ns,
        dur_ns = r.total_ns,
        op = r.op,
        kind = r.kind,
        file = r.file,
        path = r.path,
        bytes = r.bytes,
        xfer = r.xfer,
        status = r.status,
    }, b"}\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The header frame's body is what the trace decoder reads.
    #[test]
    fn header_body_decodes() {
        let body = trace_header_body();
        TraceRecordRef::bin_decoder(&body).unwrap();
        let f = frame(FRAME_HEADER, &body);
        assert_eq!(f[4], FRAME_HEADER);
        assert_eq!(
            u32::from_le_bytes(f[..4].try_into().unwrap()) as usize,
            body.len()
        );
    }
}

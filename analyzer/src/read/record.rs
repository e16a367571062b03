//! Typed events: one borrowed trace record, the process key, and operation classes.

use serde::{Deserialize, Serialize};
use std::fmt;

/// One trace record as the readers hand it out: fields borrow from the reader's buffer,
/// so no allocation happens per record. The type is generated from the format's record
/// table (`h5prov_format`); field meanings are in `docs/TRACE-FORMAT.md`.
pub use h5prov_format::TraceRecordRef as RecordRef;

/// The analyzer's methods on a [`RecordRef`] (`end_ns` is the format's own).
pub trait RecordExt {
    /// The process this record came from.
    fn proc(&self) -> ProcKey;
}

impl RecordExt for RecordRef<'_> {
    #[inline]
    fn proc(&self) -> ProcKey {
        ProcKey {
            rank: self.rank,
            pid: self.pid,
        }
    }
}

/// Identifies a process: its MPI rank, or its pid when there is no rank (`rank = -1`).
/// Ordered by rank, then pid.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct ProcKey {
    /// MPI rank, -1 when unknown.
    pub rank: i64,
    /// Process id.
    pub pid: u32,
}

impl fmt::Display for ProcKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.rank >= 0 {
            write!(f, "rank {}", self.rank)
        } else {
            write!(f, "pid {}", self.pid)
        }
    }
}

/// The I/O activity class of an operation, used for phases and the metadata share.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OpClass {
    /// `dataset.write` (and `dataset.optional:chunk_write`).
    DataWrite,
    /// `dataset.read` (and `dataset.optional:chunk_read`).
    DataRead,
    /// Everything else: opens, creates, gets, closes, links, flushes, and attribute
    /// reads and writes (attributes live in object headers: metadata, not dataset I/O).
    Metadata,
}

impl OpClass {
    /// Classifies an operation name.
    pub fn of(op: &str) -> OpClass {
        match h5prov_format::op_family(op) {
            "dataset.write" => OpClass::DataWrite,
            "dataset.read" => OpClass::DataRead,
            _ => match op {
                "dataset.optional:chunk_write" => OpClass::DataWrite,
                "dataset.optional:chunk_read" => OpClass::DataRead,
                _ => OpClass::Metadata,
            },
        }
    }

    /// Short lowercase name.
    pub fn name(self) -> &'static str {
        match self {
            OpClass::DataWrite => "data write",
            OpClass::DataRead => "data read",
            OpClass::Metadata => "metadata",
        }
    }
}

/// The label the connector gives an object created without a name (`H5Dcreate_anon`,
/// ...), `(anonymous #N of pid P)`, starts so: its records carry it in `path` until a link
/// names the object; that link's record carries it in `anon`.
pub const ANONYMOUS_LABEL: &str = "(anonymous #";

/// Whether `path` is an anonymous object's label.
#[inline]
pub fn is_anonymous_label(path: &str) -> bool {
    path.as_bytes().first() == Some(&b'(') && path.starts_with(ANONYMOUS_LABEL)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes() {
        assert_eq!(OpClass::of("dataset.write"), OpClass::DataWrite);
        // Attributes are not datasets: their I/O is metadata (object headers).
        assert_eq!(OpClass::of("attr.read"), OpClass::Metadata);
        assert_eq!(OpClass::of("attr.write"), OpClass::Metadata);
        assert_eq!(
            OpClass::of("dataset.optional:chunk_write"),
            OpClass::DataWrite
        );
        assert_eq!(OpClass::of("dataset.get:space"), OpClass::Metadata);
        assert_eq!(OpClass::of("group.open"), OpClass::Metadata);
    }

    #[test]
    fn proc_order_and_display() {
        let a = ProcKey { rank: 1, pid: 99 };
        let b = ProcKey { rank: 2, pid: 1 };
        assert!(a < b);
        assert_eq!(a.to_string(), "rank 1");
        assert_eq!(ProcKey { rank: -1, pid: 7 }.to_string(), "pid 7");
    }
}

//! The pending-records sidecar (`<stem>.pending`): the records a process has buffered but
//! not yet written to its trace file, kept in a file the process maps shared, so that they
//! survive `_exit`, `os._exit` and `kill -9`. A process that finishes normally writes
//! them and removes the sidecar; one that does not leaves it next to its trace, and the
//! analyzer reads the two as one trace.
//!
//! Layout (`docs/TRACE-FORMAT.md`, "The pending sidecar"; numbers are little-endian):
//!
//! ```text
//! file   = "H5PROVP1" u64(version) u64(first) u64(size) ... slot* (slot i at first + i * size)
//! slot   = u64(state) u64(at) pad[48] data[size - 64]
//! state  = bit 63: draining; bits 0..48: len, the bytes of data[] that hold records
//! ```
//!
//! `data[..len]` is in the trace file's own encoding, whole records only (a binary slot
//! starts with a block's zero length): what the thread would write to the trace next,
//! uncompressed. A slot is "filling" (bit 63 clear): its records are not in the trace and
//! come after it. Or it is "draining at `at`": its records were being written at byte
//! `at` of the trace file (as stored, compressed or not), so the trace from `at` on is a
//! partial or complete copy of them: the trace is read as if cut at `at`, then the slot.
//! A process drains one slot at a time, under its trace file's lock.

/// The first eight bytes of a sidecar.
pub const PENDING_MAGIC: &[u8; 8] = b"H5PROVP1";
/// The sidecar layout version.
pub const PENDING_VERSION: u64 = 1;
/// The sidecar's file-name suffix (after the stem its trace file shares).
pub const PENDING_SUFFIX: &str = ".pending";
/// Bytes of a slot's header; its records follow.
pub const PENDING_SLOT_HEADER: usize = 64;
/// Bit 63 of a slot's state: draining.
pub const PENDING_DRAINING: u64 = 1 << 63;
/// Bits of a slot's state that hold its length.
pub const PENDING_LEN_MASK: u64 = (1 << 48) - 1;
/// The largest slot a reader accepts (a larger size is corrupt).
pub const PENDING_MAX_SLOT: u64 = 1 << 28;

/// The header of a sidecar: the version, where the first slot starts, the slots' size.
pub fn pending_header(first: u64, size: u64) -> [u8; 32] {
    let mut h = [0u8; 32];
    h[..8].copy_from_slice(PENDING_MAGIC);
    h[8..16].copy_from_slice(&PENDING_VERSION.to_le_bytes());
    h[16..24].copy_from_slice(&first.to_le_bytes());
    h[24..32].copy_from_slice(&size.to_le_bytes());
    h
}

/// Reads a sidecar header: (first slot offset, slot size), or what is wrong with it.
pub fn parse_pending_header(h: &[u8]) -> Result<(u64, u64), String> {
    if h.len() < 32 || &h[..8] != PENDING_MAGIC {
        return Err("not an h5prov pending sidecar (it does not start with H5PROVP1)".into());
    }
    let word = |i: usize| u64::from_le_bytes(h[i..i + 8].try_into().unwrap_or([0; 8]));
    let (version, first, size) = (word(8), word(16), word(24));
    if version != PENDING_VERSION {
        return Err(format!(
            "sidecar layout version {version}, this analyzer reads version {PENDING_VERSION}"
        ));
    }
    if first < 32 || size <= PENDING_SLOT_HEADER as u64 || size > PENDING_MAX_SLOT {
        return Err(format!(
            "slot offset {first} or size {size} is impossible (corrupt sidecar)"
        ));
    }
    Ok((first, size))
}

/// A slot's state word: (draining, len).
pub fn pending_state(word: u64) -> (bool, u64) {
    (word & PENDING_DRAINING != 0, word & PENDING_LEN_MASK)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_round_trip_and_bad_ones_are_named() {
        let h = pending_header(4096, 8192);
        assert_eq!(parse_pending_header(&h), Ok((4096, 8192)));
        assert!(parse_pending_header(b"H5PROVB1")
            .unwrap_err()
            .contains("H5PROVP1"));
        let bad = pending_header(4096, 3);
        assert!(parse_pending_header(&bad).unwrap_err().contains("corrupt"));
        assert_eq!(pending_state(PENDING_DRAINING | 7), (true, 7));
        assert_eq!(pending_state(9), (false, 9));
    }
}

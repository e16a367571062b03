//! The pending-records sidecar (`<stem>.pending`): a slot of shared memory per thread
//! buffer, where buffered records survive `_exit` and `kill -9`.

use crate::ffi::sys;
use parking_lot::Mutex;
use std::fs::File;

/// The pending-records sidecar (`<stem>.pending`, layout in `h5prov_format::pending`):
/// one slot per thread buffer, each a shared mapping of its part of the file.
pub(super) struct Pending {
    pub(super) path: std::path::PathBuf,
    pub(super) slots: Mutex<PendingSlots>,
    /// Bytes of a slot, its header included (a multiple of the page size).
    pub(super) size: usize,
    /// Where slot 0 starts (one page: mappings start at page boundaries).
    pub(super) first: u64,
}

pub(super) struct PendingSlots {
    pub(super) file: File,
    /// Slots made so far.
    pub(super) made: u64,
    /// Slots of threads that ended, empty, for the next thread.
    pub(super) free: Vec<Slot>,
    /// A slot could not be made (noted once on stderr).
    pub(super) failed: bool,
}

impl Pending {
    /// A slot for a new thread buffer: a freed one, else a new one at the end of the
    /// file, its blocks allocated before it is mapped (a store into a hole of a full file
    /// system would raise `SIGBUS`). `None` when the file cannot grow: the thread's records
    /// are then only in memory until written, as without a sidecar.
    pub(super) fn take(&self, fsize_cap: Option<u64>) -> Option<Slot> {
        let mut g = self.slots.lock();
        if let Some(slot) = g.free.pop() {
            return Some(slot);
        }
        let off = self.first + g.made * self.size as u64;
        let end = off + self.size as u64;
        let made = if fsize_cap.is_some_and(|cap| end > cap) {
            Err(std::io::Error::from_raw_os_error(libc::EFBIG))
        } else {
            sys::allocate(&g.file, off, self.size as u64)
                .and_then(|()| sys::SharedMap::new(&g.file, off, self.size))
        };
        match made {
            Ok(map) => {
                g.made += 1;
                Some(Slot { map, len: 0 })
            }
            Err(e) => {
                if !std::mem::replace(&mut g.failed, true) {
                    eprintln!(
                        "h5prov: note: cannot extend {}: {e}; records buffered by new threads \
                         are lost if the process ends without closing HDF5",
                        self.path.display()
                    );
                }
                None
            }
        }
    }

    /// Takes back the (empty) slot of a thread that ended.
    pub(super) fn give(&self, slot: Slot) {
        self.slots.lock().free.push(slot);
    }
}

/// A thread buffer's slot in the sidecar: the block's bytes, and its state word (filling
/// with a length, or draining at a trace offset) stored after each whole record. Plain
/// stores into a shared mapping: the kernel keeps them whatever kills the process. With a
/// slot, the slot *is* the thread's block: each record is encoded into the chunk's small
/// staging buffer, moved here, and the block is written to the trace from the mapping, so
/// the records' bytes are stored once, not in a private buffer and again in the mapping.
pub(super) struct Slot {
    map: sys::SharedMap,
    /// The length last stored (the block's bytes the slot holds).
    pub(super) len: usize,
}

impl Slot {
    /// Copies `bytes` (whole records) after the slot's and stores the new length. False,
    /// and nothing stored, when they do not fit.
    #[inline]
    pub(super) fn push(&mut self, bytes: &[u8]) -> bool {
        if !self
            .map
            .write(h5prov_format::PENDING_SLOT_HEADER + self.len, bytes)
        {
            return false;
        }
        self.len += bytes.len();
        self.map.store_u64(0, self.len as u64);
        true
    }

    /// The block's bytes the slot holds.
    pub(super) fn held(&self) -> &[u8] {
        self.map
            .bytes(h5prov_format::PENDING_SLOT_HEADER, self.len)
            .unwrap_or(&[])
    }

    /// About to write `len` buffered bytes at byte `at` of the trace file: if the slot
    /// holds them all, it says so (a reader cuts the trace at `at` and reads the slot);
    /// else it claims nothing (a cut write is then a truncated trace, reported as such).
    pub(super) fn draining(&self, at: u64, len: usize) {
        if len == self.len && len > 0 {
            self.map.store_u64(8, at);
            self.map
                .store_u64(0, h5prov_format::PENDING_DRAINING | self.len as u64);
        } else {
            self.disclaim();
        }
    }

    /// The slot claims to hold nothing (its bytes are written, dropped or not all of the
    /// block); [`clear`](Self::clear) empties it once they are no longer read.
    pub(super) fn disclaim(&self) {
        self.map.store_u64(0, 0);
    }

    /// The block was written (or dropped and counted): the slot holds nothing.
    pub(super) fn clear(&mut self) {
        self.len = 0;
        self.disclaim();
    }
}

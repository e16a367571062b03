//! glibc's allocator settings for the `h5prov` binary (not the library: a program that
//! links it keeps its own). The one module of the binary with unsafe code: a call of
//! `mallopt`.
//!
//! glibc serves allocations from 128 KiB up with their own mappings, returned to the
//! system when freed, but raises that threshold to the size of every such block freed
//! (up to 32 MiB). The analyzer frees big vectors while it reads and sorts (hash tables,
//! sort keys, per-file object tables), so the later big vectors came from the heap, where
//! freed memory stays in the process and fragments. On the 10M-record 64-file set
//! (docs/PARQUET.md) `h5prov report` kept ~120 MB of freed memory at its peak: a fixed
//! threshold of 64 KiB took its peak RSS from 356–366 MB to 259–275 MB, for ~1 s more
//! time (page faults of fresh mappings; with each worker's dataset-fact tables reused
//! from one trace file to the next, time is on par). Only for a report of trace files:
//! a report of a Parquet export allocates and frees buffers of 64 KiB–1 MiB per column
//! page, and mapping each took 3–4 s of system time (+15%).
#![allow(unsafe_code)]

/// Allocations from this size up get their own mapping, freed back to the system.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const MMAP_THRESHOLD: libc::c_int = 64 << 10;

/// Fixes glibc's mmap threshold at [`MMAP_THRESHOLD`] (which also stops glibc from
/// raising its trim threshold). Nothing on other C libraries.
pub fn tune() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `mallopt` only sets an allocator parameter; `main` calls it before any
    // other thread exists. A refusal (return 0) leaves glibc's default, which is correct,
    // only bigger.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD);
    }
}

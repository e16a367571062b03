//! Tiny OS and HDF5 queries used by the tracer.

/// Kernel thread id of the calling thread.
pub fn gettid() -> u64 {
    // SAFETY: gettid has no preconditions.
    unsafe { libc::gettid() as u64 }
}

/// `CLOCK_MONOTONIC` now, in ns (the clock `std::time::Instant` uses on Linux).
pub fn mono_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid out-pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Real user id.
pub fn uid() -> u32 {
    // SAFETY: getuid has no preconditions.
    unsafe { libc::getuid() }
}

/// The version of the HDF5 library h5prov is bound to, `major.minor.release` (empty when
/// not bound).
pub fn hdf5_version() -> String {
    h5prov_bindings::loader::bound()
        .map(|b| format!("{}.{}.{}", b.version.0, b.version.1, b.version.2))
        .unwrap_or_default()
}

/// Path of the HDF5 library h5prov is bound to (empty when not bound).
pub fn hdf5_library() -> String {
    h5prov_bindings::loader::bound()
        .map(|b| b.path.display().to_string())
        .unwrap_or_default()
}

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

/// The HDF5 library version, `major.minor.release`.
pub fn hdf5_version() -> String {
    let (mut a, mut b, mut c) = (0, 0, 0);
    // SAFETY: three valid out-pointers.
    unsafe { h5prov_bindings::sys::h5::H5get_libversion(&mut a, &mut b, &mut c) };
    format!("{a}.{b}.{c}")
}

//! Tiny OS and HDF5 queries used by the tracer: the connector's lowest layer, which names
//! no other connector module (`connector/tests/layers.rs` keeps it so).

/// Kernel thread id of the calling thread.
///
/// Through `syscall(SYS_gettid)`, not glibc's `gettid()` wrapper: the wrapper is new in
/// glibc 2.30, and the wheel's `libh5prov.so` is linked for glibc 2.17 (manylinux2014,
/// scripts/build-wheel.sh). The wrapper makes the same system call.
pub fn gettid() -> u64 {
    // SAFETY: gettid has no arguments and no preconditions; it cannot fail.
    unsafe { libc::syscall(libc::SYS_gettid) as u64 }
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

/// `CLOCK_REALTIME_COARSE` now, in ns since the epoch: the clock the kernel stamps files'
/// times from (a tick coarse), so a file created after this reading has a birth time no
/// earlier than it.
pub fn coarse_wall_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid out-pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_REALTIME_COARSE, &mut ts) };
    (ts.tv_sec.max(0) as u64).saturating_mul(1_000_000_000) + ts.tv_nsec.max(0) as u64
}

/// The process's file-size limit (`RLIMIT_FSIZE`, soft), if it has one.
pub fn file_size_limit() -> Option<u64> {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: a valid out-pointer.
    let ok = unsafe { libc::getrlimit(libc::RLIMIT_FSIZE, &mut r) } == 0;
    (ok && r.rlim_cur != libc::RLIM_INFINITY).then_some(r.rlim_cur)
}

/// The host name (`gethostname`: one `uname` call, where reading
/// `/proc/sys/kernel/hostname` took five), empty if it cannot be read.
pub fn host_name() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: buf's length is passed; the name is NUL-terminated when it fits, and the
    // last byte stays 0 when it does not.
    let r = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len() - 1) };
    if r != 0 {
        return String::new();
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

/// The name of the real user (`getpwuid_r`), else `$USER`/`$LOGNAME` (which anyone can
/// set), else empty.
pub fn user_name() -> String {
    let uid = uid();
    let mut pw: libc::passwd = empty_passwd();
    let mut out: *mut libc::passwd = std::ptr::null_mut();
    let mut buf = vec![0u8; 4096];
    // SAFETY: valid pointers; buf's length is passed; out is set to &pw or null.
    let r = unsafe { libc::getpwuid_r(uid, &mut pw, buf.as_mut_ptr().cast(), buf.len(), &mut out) };
    if r == 0 && !out.is_null() && !pw.pw_name.is_null() {
        // SAFETY: getpwuid_r filled pw_name with a NUL-terminated string inside buf.
        let name = unsafe { std::ffi::CStr::from_ptr(pw.pw_name) };
        return name.to_string_lossy().into_owned();
    }
    std::env::var("USER")
        .or_else(|_| std::env::var("LOGNAME"))
        .unwrap_or_default()
}

fn empty_passwd() -> libc::passwd {
    libc::passwd {
        pw_name: std::ptr::null_mut(),
        pw_passwd: std::ptr::null_mut(),
        pw_uid: 0,
        pw_gid: 0,
        pw_gecos: std::ptr::null_mut(),
        pw_dir: std::ptr::null_mut(),
        pw_shell: std::ptr::null_mut(),
    }
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

/// The `fork()` handlers given to [`register_fork_handlers`]: prepare, parent, child.
static FORK_HANDLERS: std::sync::OnceLock<[fn(); 3]> = std::sync::OnceLock::new();

/// Runs fork handler `i` of [`FORK_HANDLERS`], if registered.
fn run_fork_handler(i: usize) {
    if let Some(h) = FORK_HANDLERS.get() {
        h[i]();
    }
}

/// Registers `fork()` handlers once per process (the tracer's: `trace::after_fork_child`
/// gives a forked child trace files of its own): `before` runs in the forking thread
/// before the fork, `parent` in it after, `child` in the child. A later call does nothing.
/// Each runs inside [`guard_unwind`]. This module imports nothing of the connector's: the
/// handlers are passed in, so the tracer above it is not named here.
pub fn register_fork_handlers(before: fn(), parent: fn(), child: fn()) {
    if FORK_HANDLERS.set([before, parent, child]).is_err() {
        return;
    }
    // No HDF5 error stack to report to around fork(): a panic is only caught.
    extern "C" fn prepare_c() {
        guard_unwind((), || run_fork_handler(0))
    }
    extern "C" fn parent_c() {
        guard_unwind((), || run_fork_handler(1))
    }
    extern "C" fn child_c() {
        guard_unwind((), || run_fork_handler(2))
    }
    // The handlers must outlive HDF5's dlclose of its plugins.
    if !h5prov_bindings::loader::pin_self() {
        return;
    }
    // SAFETY: three handlers that never unwind into C (each is one guard), in a
    // library pinned in memory for the life of the process.
    unsafe { libc::pthread_atfork(Some(prepare_c), Some(parent_c), Some(child_c)) };
}

/// The guard of the `extern "C"` functions that have no HDF5 error stack to report to: the
/// plugin entry points (called before h5prov is bound to an HDF5) and the `fork()` handlers.
/// A panic is caught (the panic hook has already printed it) and `fail` is returned.
/// (Here, at the bottom of the connector, so that the fork handlers need nothing above.)
#[inline]
pub fn guard_unwind<R>(fail: R, f: impl FnOnce() -> R) -> R {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or(fail)
}

/// The CPU's time-stamp counter, on x86-64 (`None` elsewhere). Only meaningful where the
/// kernel itself keeps time with it ([`crate::clock`] checks).
#[inline(always)]
pub fn tsc() -> Option<u64> {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: RDTSC has no preconditions; every x86-64 CPU has it.
        Some(unsafe { core::arch::x86_64::_rdtsc() })
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        None
    }
}

/// `send(2)` with `MSG_NOSIGNAL` on a connected stream socket: a collector that went away
/// yields `EPIPE` instead of a `SIGPIPE` that would kill the application (std's
/// `UnixStream::write` uses `write(2)`, which raises it). Returns the bytes sent.
pub fn send_nosignal(fd: std::os::fd::BorrowedFd<'_>, buf: &[u8]) -> std::io::Result<usize> {
    use std::os::fd::AsRawFd;
    loop {
        // SAFETY: `fd` is an open descriptor for the borrow's lifetime; `buf` is valid for
        // `buf.len()` bytes.
        let n = unsafe {
            libc::send(
                fd.as_raw_fd(),
                buf.as_ptr().cast(),
                buf.len(),
                libc::MSG_NOSIGNAL,
            )
        };
        if n >= 0 {
            return Ok(n as usize);
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// A `MAP_SHARED` read-write mapping of part of a file (the trace's pending-records
/// sidecar): stores into it are in the page cache at once, so they survive the process
/// however it ends (`_exit`, `kill -9`), though not a crash of the machine.
///
/// Hazards, and how the caller avoids them: a store into a page the file no longer
/// covers, or into a hole the file system cannot fill, raises `SIGBUS`. The caller
/// allocates the file's blocks ([`allocate`]) before mapping them and never shrinks it.
pub struct SharedMap {
    ptr: std::ptr::NonNull<u8>,
    len: usize,
}

// SAFETY: the mapping is plain memory owned by this value; `&self` methods only do
// atomic stores, `&mut self` ones are exclusive.
unsafe impl Send for SharedMap {}
// SAFETY: as above.
unsafe impl Sync for SharedMap {}

impl SharedMap {
    /// Maps `len` bytes of `file` at `offset` (a multiple of the page size), read-write
    /// and shared.
    pub fn new(file: &std::fs::File, offset: u64, len: usize) -> std::io::Result<SharedMap> {
        use std::os::fd::AsRawFd;
        // SAFETY: a fresh mapping (no address hint) of a file descriptor that is open for
        // reading and writing; the result is checked.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                file.as_raw_fd(),
                offset as libc::off_t,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        let ptr = std::ptr::NonNull::new(p.cast::<u8>())
            .ok_or_else(|| std::io::Error::other("mmap returned a null mapping"))?;
        Ok(SharedMap { ptr, len })
    }

    /// Stores `v` (little-endian) at byte `off`, a multiple of 8, in one atomic store
    /// (release: the bytes stored before it are in the mapping first). Out of bounds or
    /// misaligned: nothing is stored.
    pub fn store_u64(&self, off: usize, v: u64) {
        if off % 8 != 0 || off + 8 > self.len {
            return;
        }
        // SAFETY: in bounds and 8-aligned (mappings are page-aligned); the mapping lives
        // as long as `self`, and every access to this word is atomic.
        let a = unsafe {
            &*self
                .ptr
                .as_ptr()
                .add(off)
                .cast::<std::sync::atomic::AtomicU64>()
        };
        a.store(v.to_le(), std::sync::atomic::Ordering::Release);
    }

    /// Copies `bytes` to byte `off`; returns false (nothing copied) when they do not fit.
    pub fn write(&mut self, off: usize, bytes: &[u8]) -> bool {
        if off
            .checked_add(bytes.len())
            .is_none_or(|end| end > self.len)
        {
            return false;
        }
        // SAFETY: the range is inside the mapping (checked above), `bytes` is another
        // allocation, and `&mut self` excludes other writers of this process.
        unsafe {
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), self.ptr.as_ptr().add(off), bytes.len())
        };
        true
    }

    /// The `len` bytes at `off`, or `None` when they are not all inside the mapping.
    pub fn bytes(&self, off: usize, len: usize) -> Option<&[u8]> {
        if off.checked_add(len).is_none_or(|end| end > self.len) {
            return None;
        }
        // SAFETY: the range is inside the mapping (checked above), which lives as long as
        // `self`; this process writes it only through `&mut self` (`write`), which the
        // returned borrow excludes, and through the atomic words of `store_u64`, which
        // callers do not read through this slice.
        Some(unsafe { std::slice::from_raw_parts(self.ptr.as_ptr().add(off), len) })
    }

    /// The mapping's length.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the mapping is empty (never: mappings have a length).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl Drop for SharedMap {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `new`, unmapped once. Unmapping writes nothing to
        // the file (a forked child that drops its copy does not touch the parent's data).
        unsafe { libc::munmap(self.ptr.as_ptr().cast(), self.len) };
    }
}

/// Allocates the blocks of `file` in `offset..offset + len` (`posix_fallocate`), so that
/// stores into a mapping of them never meet a full file system (`SIGBUS`).
pub fn allocate(file: &std::fs::File, offset: u64, len: u64) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    // SAFETY: plain system call on an open descriptor.
    let r = unsafe {
        libc::posix_fallocate(file.as_raw_fd(), offset as libc::off_t, len as libc::off_t)
    };
    if r == 0 {
        Ok(())
    } else {
        Err(std::io::Error::from_raw_os_error(r))
    }
}

/// The page size.
pub fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p > 0 {
        p as usize
    } else {
        4096
    }
}

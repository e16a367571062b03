//! Binding to the HDF5 library that loaded h5prov, at run time.
//!
//! `libh5prov.so` links no `libhdf5`. When HDF5 calls `H5PLget_plugin_info`, h5prov:
//! 1. lists the HDF5 libraries in the process: every loaded object (`dl_iterate_phdr`) that
//!    resolves `H5get_libversion` (`dlopen(path, RTLD_NOLOAD)` + `dlsym`), deduplicated by
//!    the object that *defines* it (`dladdr`): `dlsym` on a handle also searches that
//!    object's dependencies, so h5py's extension modules "have" HDF5's symbols too;
//! 2. finds which of them is calling: the first frame of the call stack whose address lies
//!    in one of those libraries (HDF5's `H5PL__open` calls `H5PLget_plugin_info`). With one
//!    HDF5 in the process and no such frame (an unwinder that cannot walk C frames), that
//!    one is the caller; with two or more, no frame means h5prov refuses: it never guesses;
//! 3. reads its version with its `H5get_libversion` and picks the ABI line (1.14 or 2.0–2.2);
//!    anything else is refused, naming the version;
//! 4. resolves every symbol of [`Api`] and of the line's `LineSyms` from that library, and
//!    checks with `dladdr` that each is defined *in* it. A missing one is refused by name.
//!
//! The binding is made once per instance of `libh5prov.so`. A second, different HDF5 that
//! loads h5prov (h5py and netCDF4 in one Python process each bring their own) gets the same
//! instance from the dynamic loader; [`bind_to_caller`] reports it as
//! [`Binding::Other`], and the plugin serves it with a private copy of itself
//! ([`load_private_copy`]): its own statics, bound to that HDF5, its own trace files.

use crate::abi::{api::Api, v1_14, v2};
use libc::RTLD_NOLOAD;
use libloading::os::unix::{Library, RTLD_LAZY};
use std::ffi::{c_int, c_void, CStr, CString, OsStr};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The ABI line of the bound HDF5, with the symbols that exist in that line only.
pub enum LineSyms {
    /// HDF5 1.14.x.
    V1_14(v1_14::LineSyms),
    /// HDF5 2.0–2.2.
    V2(v2::LineSyms),
}

impl LineSyms {
    /// `"1.14"` or `"2.x"`.
    pub fn name(&self) -> &'static str {
        match self {
            LineSyms::V1_14(_) => "1.14",
            LineSyms::V2(_) => "2.x",
        }
    }
}

/// The HDF5 library h5prov is bound to.
pub struct Bound {
    /// The common symbols.
    pub api: Api,
    /// The line and its own symbols.
    pub line: LineSyms,
    /// The MPI-IO queries, in a parallel HDF5.
    pub mpio: Option<crate::mpio::Mpio>,
    /// `H5get_libversion`.
    pub version: (u32, u32, u32),
    /// Path of the library, as the dynamic loader knows it.
    pub path: PathBuf,
    /// Load address (identifies the library).
    base: usize,
    /// Keeps a reference to the library (it is loaded anyway: HDF5 is calling us).
    _lib: Library,
}

static BOUND: OnceLock<Bound> = OnceLock::new();

/// The bound library, if h5prov is bound.
#[inline]
pub fn bound() -> Option<&'static Bound> {
    BOUND.get()
}

/// The common symbol table. Panics when h5prov is not bound; every caller runs inside the
/// connector's panic guard, and no callback can run before HDF5 loaded (and so bound) us.
#[inline]
pub fn api() -> &'static Api {
    match BOUND.get() {
        Some(b) => &b.api,
        None => not_bound(),
    }
}

#[cold]
#[inline(never)]
fn not_bound() -> ! {
    panic!("h5prov is not bound to an HDF5 library (it must be loaded by HDF5)")
}

/// An HDF5 library found in the process.
#[derive(Debug, Clone)]
pub struct Candidate {
    /// Path as the dynamic loader knows it (empty for the main program).
    pub path: PathBuf,
    /// Load address of the object that defines HDF5's symbols.
    pub base: usize,
}

/// Why h5prov refuses to bind.
#[derive(Debug)]
pub struct BindError {
    /// The message (names the library, version or symbol).
    pub message: String,
    /// The calling HDF5, when known (errors can be pushed on its stack).
    pub caller: Option<Candidate>,
}

impl std::fmt::Display for BindError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// The object (path, base) that defines `addr`, per `dladdr`.
fn defining_object(addr: *const c_void) -> Option<(PathBuf, usize)> {
    let mut info: libc::Dl_info = libc::Dl_info {
        dli_fname: std::ptr::null(),
        dli_fbase: std::ptr::null_mut(),
        dli_sname: std::ptr::null(),
        dli_saddr: std::ptr::null_mut(),
    };
    // SAFETY: dladdr reads only `addr`'s value and fills `info`.
    if unsafe { libc::dladdr(addr, &mut info) } == 0 || info.dli_fbase.is_null() {
        return None;
    }
    // SAFETY: dladdr returned a NUL-terminated name owned by the loader, or null.
    Some((
        unsafe { loader_path(info.dli_fname) },
        info.dli_fbase as usize,
    ))
}

/// A path the dynamic loader reports (empty for null: the main program).
///
/// # Safety
/// `name` is null or a NUL-terminated string that lives while this runs.
unsafe fn loader_path(name: *const std::ffi::c_char) -> PathBuf {
    if name.is_null() {
        return PathBuf::new();
    }
    // SAFETY: per the contract.
    PathBuf::from(OsStr::from_bytes(
        unsafe { CStr::from_ptr(name) }.to_bytes(),
    ))
}

/// The path of this `libh5prov.so`, if the loader knows it.
fn own_path() -> Option<PathBuf> {
    defining_object(own_path as *const c_void)
        .map(|(p, _)| p)
        .filter(|p| !p.as_os_str().is_empty())
}

/// Opens an already loaded object without loading anything (`RTLD_NOLOAD`); the main
/// program for an empty path.
fn open_loaded(path: &Path) -> Option<Library> {
    if path.as_os_str().is_empty() {
        return Some(Library::this());
    }
    // SAFETY: RTLD_NOLOAD never loads (so runs no initialisers); it only returns a new
    // reference to an object that is already mapped.
    unsafe { Library::open(Some(path), RTLD_NOLOAD | RTLD_LAZY) }.ok()
}

/// The address of `name` in `lib` (or a dependency of it), or null.
fn symbol(lib: &Library, name: &CStr) -> *mut c_void {
    // SAFETY: we only take the symbol's address; nothing is called or read here.
    match unsafe { lib.get::<*mut c_void>(name.to_bytes_with_nul()) } {
        Ok(s) => *s,
        Err(_) => std::ptr::null_mut(),
    }
}

/// A loaded object: its path (empty for the main program) and the address ranges of its
/// loaded segments (`PT_LOAD`).
struct Loaded {
    path: PathBuf,
    segments: Vec<(usize, usize)>,
}

/// Every loaded object, in load order (the main program first), from one
/// `dl_iterate_phdr` pass.
fn loaded_objects() -> Vec<Loaded> {
    unsafe extern "C" fn each(
        info: *mut libc::dl_phdr_info,
        _size: usize,
        data: *mut c_void,
    ) -> c_int {
        // SAFETY: dl_iterate_phdr passes a valid info and our `data` (a Vec<Loaded>).
        let (info, out) = unsafe { (&*info, &mut *data.cast::<Vec<Loaded>>()) };
        let phdrs: &[libc::Elf64_Phdr] = if info.dlpi_phdr.is_null() {
            &[]
        } else {
            // SAFETY: dlpi_phdr points to dlpi_phnum program headers.
            unsafe { std::slice::from_raw_parts(info.dlpi_phdr, usize::from(info.dlpi_phnum)) }
        };
        let load = info.dlpi_addr as usize;
        out.push(Loaded {
            // SAFETY: a NUL-terminated string owned by the loader, or null.
            path: unsafe { loader_path(info.dlpi_name) },
            segments: phdrs
                .iter()
                .filter(|p| p.p_type == libc::PT_LOAD)
                .map(|p| {
                    let start = load.wrapping_add(p.p_vaddr as usize);
                    (start, start.wrapping_add(p.p_memsz as usize))
                })
                .collect(),
        });
        0
    }
    let mut out: Vec<Loaded> = Vec::new();
    // SAFETY: the callback only reads the info it is given and pushes to `out`.
    unsafe { libc::dl_iterate_phdr(Some(each), (&mut out as *mut Vec<Loaded>).cast()) };
    out
}

/// Every HDF5 library in the process, deduplicated by the object that defines
/// `H5get_libversion`.
pub fn candidates() -> Vec<Candidate> {
    let mut found: Vec<Candidate> = Vec::new();
    for Loaded { path, .. } in loaded_objects() {
        let Some(lib) = open_loaded(&path) else {
            continue;
        };
        let p = symbol(&lib, c"H5get_libversion");
        if p.is_null() {
            continue;
        }
        if let Some((def_path, base)) = defining_object(p) {
            if !found.iter().any(|c| c.base == base) {
                found.push(Candidate {
                    path: def_path,
                    base,
                });
            }
        }
    }
    found
}

/// Instruction addresses of the calling frames (innermost first), at most `max`.
fn call_stack(max: usize) -> Vec<usize> {
    #[repr(C)]
    struct UnwindContext {
        _p: [u8; 0],
    }
    type TraceFn = extern "C" fn(*mut UnwindContext, *mut c_void) -> c_int;
    extern "C" {
        // libgcc_s (linked by Rust's std on linux-gnu): walks the stack with .eh_frame.
        fn _Unwind_Backtrace(trace: TraceFn, arg: *mut c_void) -> c_int;
        fn _Unwind_GetIP(ctx: *mut UnwindContext) -> usize;
    }
    struct State {
        ips: Vec<usize>,
        max: usize,
    }
    extern "C" fn each(ctx: *mut UnwindContext, arg: *mut c_void) -> c_int {
        // SAFETY: `arg` is our State; ctx is the unwinder's live context.
        let st = unsafe { &mut *arg.cast::<State>() };
        let ip = unsafe { _Unwind_GetIP(ctx) };
        if ip != 0 {
            st.ips.push(ip);
        }
        // _URC_NO_REASON continues; _URC_END_OF_STACK (5) stops.
        if st.ips.len() >= st.max {
            5
        } else {
            0
        }
    }
    let mut st = State {
        ips: Vec::with_capacity(max),
        max,
    };
    // SAFETY: the callback only records addresses.
    unsafe { _Unwind_Backtrace(each, (&mut st as *mut State).cast()) };
    st.ips
}

/// Which of `cands` is on the call stack (the innermost one).
fn calling(cands: &[Candidate]) -> Option<Candidate> {
    call_stack(64).into_iter().find_map(|ip| {
        // A return address points just past the call; -1 stays inside the caller.
        let (_, base) = defining_object((ip.saturating_sub(1)) as *const c_void)?;
        cands.iter().find(|c| c.base == base).cloned()
    })
}

/// The HDF5 that is calling h5prov right now (see the module docs).
pub fn caller() -> Result<Candidate, BindError> {
    let cands = candidates();
    if let Some(c) = calling(&cands) {
        return Ok(c);
    }
    match cands.as_slice() {
        [one] => Ok(one.clone()),
        [] => Err(BindError {
            message: "h5prov: no HDF5 library found in this process (h5prov must be loaded by \
                      HDF5 >= 1.14 through HDF5_PLUGIN_PATH / HDF5_VOL_CONNECTOR)"
                .into(),
            caller: None,
        }),
        many => Err(BindError {
            message: format!(
                "h5prov: {} HDF5 libraries are loaded ({}) and none of them is on the call \
                 stack, so h5prov cannot tell which one loaded it; refusing to register",
                many.len(),
                many.iter()
                    .map(|c| c.path.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            caller: None,
        }),
    }
}

/// The address ranges of the loaded segments (`PT_LOAD`) of the object mapped at `base`
/// (the start of its first segment, as `dladdr` reports it); empty if there is none.
fn segments_of(objects: &[Loaded], base: usize) -> Vec<(usize, usize)> {
    objects
        .iter()
        .find(|o| {
            // The mapping starts at the first segment's page.
            o.segments
                .iter()
                .map(|r| r.0)
                .min()
                .is_some_and(|f| f & !0xfff == base)
        })
        .map(|o| o.segments.clone())
        .unwrap_or_default()
}

/// A generated table's `load`: resolves each symbol through the callback, or names the
/// first one missing.
type TableLoader<T> = unsafe fn(&mut dyn FnMut(&CStr) -> *mut c_void) -> Result<T, &'static str>;

/// Resolves the symbols of one table from `lib`, each checked to be defined in the object
/// at `base`: its address lies in that object's segments (one `dl_iterate_phdr` pass; a
/// `dladdr` per symbol scans the library's whole symbol table, about 100,000 instructions
/// each for libhdf5: 15 million at every start). Without segments, `dladdr` decides.
fn resolve<T>(lib: &Library, base: usize, load: TableLoader<T>) -> Result<T, String> {
    let mut foreign: Option<String> = None;
    let objects = loaded_objects();
    let segments = segments_of(&objects, base);
    // A global variable the main program refers to lives in the main program: the linker
    // copied it there (a copy relocation) and HDF5's own code uses that copy, through
    // its GOT. The library's original stays at its initial value, so read the copy.
    let main_program = Library::this();
    let main_segments: &[(usize, usize)] = objects
        .first()
        .filter(|o| o.path.as_os_str().is_empty())
        .map_or(&[], |o| &o.segments);
    let copied = |name: &CStr| -> Option<*mut c_void> {
        if !name.to_bytes().ends_with(b"_g") {
            return None;
        }
        let p = symbol(&main_program, name);
        let a = p as usize;
        main_segments
            .iter()
            .any(|&(s, e)| (s..e).contains(&a))
            .then_some(p)
    };
    let defined_here = |p: *mut c_void| {
        let a = p as usize;
        if segments.is_empty() {
            defining_object(p).map(|(_, b)| b) == Some(base)
        } else {
            segments.iter().any(|&(s, e)| (s..e).contains(&a))
        }
    };
    let mut sym = |name: &CStr| {
        if let Some(p) = copied(name) {
            return p;
        }
        let p = symbol(lib, name);
        if !p.is_null() && !defined_here(p) {
            foreign.get_or_insert_with(|| name.to_string_lossy().into_owned());
            return std::ptr::null_mut();
        }
        p
    };
    // SAFETY: `sym` returns addresses from the one HDF5 library at `base`, whose line the
    // caller chose from its version.
    let r = unsafe { load(&mut sym) };
    match (r, foreign) {
        (Ok(t), _) => Ok(t),
        (Err(name), Some(f)) if f == name => Err(format!(
            "symbol {name} resolves to another library, not to this HDF5"
        )),
        (Err(name), _) => Err(format!("missing symbol {name}")),
    }
}

/// The version of the HDF5 library `lib`.
fn version_of(lib: &Library) -> Option<(u32, u32, u32)> {
    let p = symbol(lib, c"H5get_libversion");
    if p.is_null() {
        return None;
    }
    type GetVersion = unsafe extern "C" fn(*mut u32, *mut u32, *mut u32) -> c_int;
    // SAFETY: H5get_libversion has had this signature in every HDF5 since 1.0; it only
    // writes three unsigned ints.
    let f = unsafe { std::mem::transmute::<*mut c_void, GetVersion>(p) };
    let (mut a, mut b, mut c) = (0, 0, 0);
    // SAFETY: three valid out-pointers.
    (unsafe { f(&mut a, &mut b, &mut c) } >= 0).then_some((a, b, c))
}

/// An HDF5 ABI line h5prov supports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Line {
    /// 1.14.x.
    V1_14,
    /// 2.0-2.2.
    V2,
}

impl Line {
    /// The line of HDF5 `major.minor.release`, if h5prov supports it.
    pub fn of_version((major, minor, _): (u32, u32, u32)) -> Option<Line> {
        match (major, minor) {
            (1, 14) => Some(Line::V1_14),
            (2, 0..=2) => Some(Line::V2),
            _ => None,
        }
    }
}

/// Resolves the line's own symbols and the common table from `lib`.
fn resolve_line(lib: &Library, base: usize, line: Line) -> Result<(LineSyms, Api), String> {
    let own = match line {
        Line::V1_14 => resolve(lib, base, v1_14::LineSyms::load).map(LineSyms::V1_14),
        Line::V2 => resolve(lib, base, v2::LineSyms::load).map(LineSyms::V2),
    }?;
    Ok((own, resolve(lib, base, Api::load)?))
}

/// Checks, without binding, that `cand` defines every symbol h5prov needs for `line`:
/// the first missing (or foreign) one is named. For tests and diagnostics.
pub fn check_symbols(cand: &Candidate, line: Line) -> Result<(), String> {
    let lib = open_loaded(&cand.path).ok_or("cannot open the library")?;
    resolve_line(&lib, cand.base, line).map(|_| ())
}

/// Binds to `cand`: version check, then every symbol.
fn bind(cand: &Candidate) -> Result<Bound, BindError> {
    let err = |message: String| BindError {
        message,
        caller: Some(cand.clone()),
    };
    let shown = if cand.path.as_os_str().is_empty() {
        "the main program".to_string()
    } else {
        cand.path.display().to_string()
    };
    let lib = open_loaded(&cand.path)
        .ok_or_else(|| err(format!("h5prov: cannot open the loaded HDF5 {shown}")))?;
    let version = version_of(&lib)
        .ok_or_else(|| err(format!("h5prov: H5get_libversion failed in {shown}")))?;
    let (ma, mi, re) = version;
    let Some(line) = Line::of_version(version) else {
        return Err(err(format!(
            "h5prov supports HDF5 1.14.x and 2.0-2.2; this process runs HDF5 {ma}.{mi}.{re} \
             ({shown}); h5prov is not registered and HDF5 carries on without it"
        )));
    };
    let (line, api) = resolve_line(&lib, cand.base, line)
        .map_err(|e| err(format!("h5prov: HDF5 {ma}.{mi}.{re} ({shown}): {e}")))?;
    let mpio = resolve(&lib, cand.base, |sym| {
        // SAFETY: forwarded: `sym` resolves from this HDF5 library.
        Ok(unsafe { crate::mpio::Mpio::load(sym) })
    })
    .ok()
    .flatten();
    Ok(Bound {
        api,
        line,
        mpio,
        version,
        path: cand.path.clone(),
        base: cand.base,
        _lib: lib,
    })
}

/// What [`bind_to_caller`] found.
pub enum Binding {
    /// This instance is bound to the calling HDF5.
    Bound(&'static Bound),
    /// This instance is bound to another HDF5; the caller needs an instance of its own.
    Other {
        /// The calling HDF5.
        caller: Candidate,
        /// The HDF5 this instance serves.
        bound: &'static Bound,
    },
}

/// Binds this instance of h5prov to the HDF5 library that is calling it (once), or
/// explains why not. Call it from `H5PLget_plugin_info`.
pub fn bind_to_caller() -> Result<Binding, BindError> {
    let cand = caller()?;
    if let Some(b) = BOUND.get() {
        if b.base == cand.base {
            return Ok(Binding::Bound(b));
        }
        return Ok(Binding::Other {
            caller: cand,
            bound: b,
        });
    }
    let bound = bind(&cand)?;
    // A racing thread may have bound first; the stored binding decides.
    let _ = BOUND.set(bound);
    let b = BOUND.get().expect("just set");
    if b.base != cand.base {
        return Ok(Binding::Other {
            caller: cand,
            bound: b,
        });
    }
    Ok(Binding::Bound(b))
}

/// How many private copies this process may load (one per further HDF5 library).
const MAX_COPIES: usize = 8;
static COPIES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Loads a private copy of this `libh5prov.so` (from an anonymous file, so the dynamic
/// loader cannot hand back this instance) and returns what *its* `H5PLget_plugin_info`
/// returns: the class of an instance bound to the HDF5 on the call stack, or NULL (it then
/// reported why). The copy stays loaded for the life of the process (HDF5 holds its class).
pub fn load_private_copy() -> Result<*const c_void, String> {
    use std::io::Write as _;
    use std::os::fd::FromRawFd;
    if COPIES.fetch_add(1, std::sync::atomic::Ordering::SeqCst) >= MAX_COPIES {
        return Err(format!(
            "h5prov: more than {} HDF5 libraries in one process",
            MAX_COPIES + 1
        ));
    }
    let me = own_path().ok_or("h5prov: cannot find the path of libh5prov.so")?;
    let bytes = std::fs::read(&me).map_err(|e| format!("h5prov: reading {}: {e}", me.display()))?;
    // Through `syscall(SYS_memfd_create)`, not glibc's wrapper (new in glibc 2.27): the
    // wheel's libh5prov.so is linked for glibc 2.17 (manylinux2014). Same system call.
    // SAFETY: memfd_create with a valid NUL-terminated name and flags; the fd is owned by
    // the File below.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_memfd_create,
            c"libh5prov.so".as_ptr(),
            libc::MFD_CLOEXEC,
        )
    } as libc::c_int;
    if fd < 0 {
        return Err(format!(
            "h5prov: memfd_create: {}",
            std::io::Error::last_os_error()
        ));
    }
    // SAFETY: fd is a fresh descriptor we own.
    let mut file = unsafe { std::fs::File::from_raw_fd(fd) };
    file.write_all(&bytes)
        .map_err(|e| format!("h5prov: writing the private copy: {e}"))?;
    let path = PathBuf::from(format!("/proc/self/fd/{fd}"));
    // SAFETY: loading our own library again; its initialisers are Rust's (no side effects
    // beyond its own statics). The mapping outlives the descriptor.
    let lib = unsafe { Library::open(Some(&path), libc::RTLD_NOW | libc::RTLD_LOCAL) }
        .map_err(|e| format!("h5prov: loading the private copy: {e}"))?;
    drop(file);
    let info = symbol(&lib, c"H5PLget_plugin_info");
    if info.is_null() {
        return Err("h5prov: the private copy has no H5PLget_plugin_info".into());
    }
    // SAFETY: our own entry point, `extern "C" fn() -> *const c_void`.
    let info =
        unsafe { std::mem::transmute::<*mut c_void, extern "C" fn() -> *const c_void>(info) };
    let cls = info();
    // HDF5 keeps the class and calls into the copy from now on.
    std::mem::forget(lib);
    Ok(cls)
}

/// Pushes `msg` on the error stack of the HDF5 library `cand` (which may be one h5prov
/// does not support), as a VOL error. Returns false when that library lacks the symbols.
pub fn push_error_to(cand: &Candidate, msg: &str) -> bool {
    let Some(lib) = open_loaded(&cand.path) else {
        return false;
    };
    let push = symbol(&lib, c"H5Epush2");
    let cls = symbol(&lib, c"H5E_ERR_CLS_g");
    let maj = symbol(&lib, c"H5E_VOL_g");
    let min = symbol(&lib, c"H5E_CANTREGISTER_g");
    if [push, cls, maj, min].iter().any(|p| p.is_null()) {
        return false;
    }
    type Push = unsafe extern "C" fn(
        i64,
        *const std::ffi::c_char,
        *const std::ffi::c_char,
        u32,
        i64,
        i64,
        i64,
        *const std::ffi::c_char,
        ...
    ) -> c_int;
    let text = CString::new(msg.replace('\0', " ")).unwrap_or_default();
    // SAFETY: H5Epush2(hid_t err_stack, const char *file, const char *func, unsigned line,
    // hid_t cls_id, hid_t maj_id, hid_t min_id, const char *fmt, ...) since 1.8, hid_t is
    // int64_t since 1.10; the globals are hid_t; "%s" takes one string.
    unsafe {
        let push = std::mem::transmute::<*mut c_void, Push>(push);
        push(
            0,
            c"h5prov".as_ptr(),
            c"H5PLget_plugin_info".as_ptr(),
            0,
            *cls.cast::<i64>(),
            *maj.cast::<i64>(),
            *min.cast::<i64>(),
            c"%s".as_ptr(),
            text.as_ptr(),
        ) >= 0
    }
}

/// Keeps this `libh5prov.so` mapped for the life of the process (`RTLD_NODELETE`), so
/// process-wide hooks into it (`pthread_atfork` handlers) stay valid after HDF5 `dlclose`s
/// its plugins at `H5close`. Returns false when the library could not be pinned.
pub fn pin_self() -> bool {
    let Some(path) = own_path() else {
        return false;
    };
    // SAFETY: RTLD_NOLOAD only takes a new reference to this already-loaded library;
    // RTLD_NODELETE marks it never to be unloaded.
    match unsafe { Library::open(Some(&path), RTLD_NOLOAD | RTLD_LAZY | libc::RTLD_NODELETE) } {
        Ok(lib) => {
            std::mem::forget(lib);
            true
        }
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The segment check that replaced a `dladdr` per symbol agrees with `dladdr`: a libc
    /// function lies in libc's segments and not in those of the object that defines this
    /// test's own code.
    #[test]
    fn segments_decide_as_dladdr_does() {
        let libc_fn = libc::getpid as *const c_void;
        let ours = segments_decide_as_dladdr_does as *const c_void;
        let (libc_path, libc_base) = defining_object(libc_fn).expect("libc is loaded");
        let (_, our_base) = defining_object(ours).expect("this test is loaded");
        assert_ne!(libc_base, our_base, "{}", libc_path.display());
        let in_range = |base: usize, p: *const c_void| {
            segments_of(&loaded_objects(), base)
                .iter()
                .any(|&(s, e)| (s..e).contains(&(p as usize)))
        };
        assert!(
            !segments_of(&loaded_objects(), libc_base).is_empty(),
            "libc's segments are found"
        );
        assert!(in_range(libc_base, libc_fn));
        assert!(!in_range(libc_base, ours));
        assert!(in_range(our_base, ours));
        assert!(!in_range(our_base, libc_fn));
    }
}

//! Connector info: h5prov's [`Info`] (the under connector and h5prov's validated options,
//! shared by every copy HDF5 makes), the `info_cls` callbacks, and the FAPLs that carry it.

use crate::config::Config;
use crate::ffi::query::quietly;
use crate::ffi::{cstr, guard, Error, UnderVol};
use crate::info::{ConnectorInfo, Under};
use crate::ops::Op;
use crate::trace;
use h5prov_bindings as b;
use h5prov_bindings::*;
use std::ffi::{c_char, c_int, c_void, CString};
use std::sync::Arc;

/// h5prov's connector info: the under connector and h5prov's validated options, shared.
///
/// HDF5 copies a connector's info whenever it copies a FAPL (`H5Pcopy`, `H5Pset_vol`) or
/// hands it over (`H5Pget_vol_info`), and frees each copy. Nothing ever changes an info
/// once made, so a copy shares the one [`InfoData`] (an `Arc` increment) instead of
/// re-copying the under connector's info and h5prov's options: each deep copy cost two
/// HDF5 API calls and, freed, an `H5VLfree_connector_info` (under vol-async: an error-stack
/// save and restore and an `H5Idec_ref`), three to four times per file create or open.
pub struct Info(Arc<InfoData>);

impl std::ops::Deref for Info {
    type Target = InfoData;
    fn deref(&self) -> &InfoData {
        &self.0
    }
}

/// What an [`Info`] holds.
pub struct InfoData {
    /// Under connector id (owned reference).
    pub under: UnderVol,
    /// Under connector's info (owned; freed with `H5VLfree_connector_info`).
    pub under_info: *mut c_void,
    /// The parsed string.
    pub parsed: ConnectorInfo,
    /// Validated options.
    pub config: Config,
    /// Whether the connectors below run operations asynchronously
    /// ([`InfoData::under_runs_async`]), asked once.
    under_async: std::sync::OnceLock<bool>,
}

// SAFETY: an InfoData never changes after it is made. Its one raw pointer, the under
// connector's info, is never dereferenced by h5prov: it is only handed to HDF5 calls (which
// a thread-safe HDF5 serialises under its lock, and a serial one runs on one thread at a
// time) and freed once, by the last holder, in `Drop`. HDF5 frees and copies connector
// infos from whichever thread makes the call, as it did with each deep copy before.
unsafe impl Send for InfoData {}
// SAFETY: as above.
unsafe impl Sync for InfoData {}

impl InfoData {
    /// The canonical info string (for metadata).
    pub fn text(&self) -> String {
        self.parsed.to_info_string()
    }

    /// Whether the connector stack below h5prov announces `H5VL_CAP_FLAG_ASYNC` (vol-async
    /// does, and so does a pass-through over it): an operation issued with a request slot
    /// may then still be queued when the call returns. Asked of HDF5 once per info (every
    /// copy of a FAPL's info shares this one).
    pub fn under_runs_async(&self) -> bool {
        *self.under_async.get_or_init(|| {
            let mut flags = 0u64;
            // SAFETY: the under connector's own info and id; a valid out-pointer.
            let r = quietly(|| unsafe {
                b::H5VLintrospect_get_cap_flags(self.under_info, self.under.id(), &mut flags)
            });
            r >= 0 && flags & u64::from(b::H5VL_CAP_FLAG_ASYNC) != 0
        })
    }
}

impl Drop for InfoData {
    fn drop(&mut self) {
        if !self.under_info.is_null() {
            let (id, p) = (self.under.id(), self.under_info);
            // SAFETY: we own under_info, created for connector `id`.
            quietly(|| unsafe { b::H5VLfree_connector_info(id, p) });
        }
    }
}

/// Parses and validates an info string, registering the under connector.
fn info_from_text(text: &str) -> Result<Info, Error> {
    info_from_bytes(text.as_bytes())
}

/// [`info_from_text`] over the bytes HDF5 hands over: a non-UTF-8 `path=` is used exactly
/// as given; any other non-UTF-8 key or value is an error naming it.
fn info_from_bytes(raw: &[u8]) -> Result<Info, Error> {
    let parsed = ConnectorInfo::parse_bytes(raw).map_err(|e| Error(e.to_string()))?;
    let mut config = Config::from_options(&parsed.options).map_err(|e| Error(e.to_string()))?;
    if let Some(p) = &parsed.path_bytes {
        use std::os::unix::ffi::OsStrExt;
        config.path = std::path::PathBuf::from(std::ffi::OsStr::from_bytes(p));
    }
    let id = match &parsed.under {
        // HDF5's built-in pass_through (value 1). 1.14 registers it only on request
        // (`H5VL_pass_through_register`, so registering it by value fails); 2.x registers it
        // when the library starts and keeps its id in `H5VL_PASSTHRU_g`. Either is HDF5's
        // cached id, so take a reference of our own.
        // SAFETY: a plain registration call or a read of an initialised HDF5 global, and a
        // reference increment.
        Under::Value(1) => unsafe {
            let id = match &b::loader::bound().ok_or("not bound to HDF5")?.line {
                b::loader::LineSyms::V1_14(l) => (l.H5VL_pass_through_register)(),
                b::loader::LineSyms::V2(l) => *l.H5VL_PASSTHRU_g,
            };
            if id >= 0 {
                b::H5Iinc_ref(id);
            }
            id
        },
        // SAFETY: plain registration calls.
        Under::Value(v) => unsafe { b::H5VLregister_connector_by_value(*v as c_int, 0) },
        Under::Name(n) => {
            let c =
                CString::new(n.as_str()).map_err(|_| Error::from("under_vol_name: NUL byte"))?;
            // SAFETY: valid C string.
            unsafe { b::H5VLregister_connector_by_name(c.as_ptr(), 0) }
        }
    };
    if id < 0 {
        return Err(Error(format!(
            "h5prov connector string: 'under_vol': under connector {:?} cannot be registered",
            parsed.under
        )));
    }
    let under = UnderVol::adopt(id);
    let mut under_info: *mut c_void = std::ptr::null_mut();
    if !parsed.under_info.is_empty() {
        let c = CString::new(parsed.under_info.as_str())
            .map_err(|_| Error::from("under_info: NUL byte"))?;
        // SAFETY: valid C string and out-pointer.
        let r = unsafe { b::H5VLconnector_str_to_info(c.as_ptr(), id, &mut under_info) };
        if r < 0 {
            return Err(Error(format!(
                "h5prov connector string: 'under_info': the under connector rejected '{}'",
                parsed.under_info
            )));
        }
    }
    Ok(Info(Arc::new(InfoData {
        under,
        under_info,
        parsed,
        config,
        under_async: std::sync::OnceLock::new(),
    })))
}

pub unsafe extern "C" fn info_from_str(s: *const c_char, info: *mut *mut c_void) -> herr_t {
    guard(-1, Op::InfoFromStr, || {
        if s.is_null() {
            return Err("NULL connector string".into());
        }
        // SAFETY: HDF5 passes a NUL-terminated C string.
        let raw = unsafe { std::ffi::CStr::from_ptr(s) }.to_bytes();
        let parsed = info_from_bytes(raw).or_else(|e| {
            // HDF5 1.14.5's pass_through (H5VL_pass_through_str_to_info) copies the under
            // connector's string one byte short and writes the NUL one byte too far, so
            // when pass_through is stacked over h5prov our string arrives with one
            // uninitialised byte after its final '}'. Only in that shape, retry without it.
            match raw {
                [head @ .., b'}', _] => {
                    let mut fixed = head.to_vec();
                    fixed.push(b'}');
                    info_from_bytes(&fixed).map_err(|_| e)
                }
                _ => Err(e),
            }
        });
        let from_env = env_h5prov_options().is_some_and(|o| o == raw.trim_ascii());
        let parsed = parsed.inspect_err(|e| {
            // When the string comes from HDF5_VOL_CONNECTOR, HDF5 replaces our error record
            // with "unable to set default VOL connector" and carries on natively: say why
            // on stderr once, so nobody believes a run is traced when it is not.
            if from_env {
                eprintln!(
                    "h5prov: HDF5_VOL_CONNECTOR rejected, h5prov is NOT active: {}",
                    e.0
                );
            }
        })?;
        if from_env {
            // HDF5 parses HDF5_VOL_CONNECTOR when the library starts: h5prov is then the
            // default connector of every file the process opens, so its trace session
            // starts here, not inside the application's first file create or open. Its
            // setup (creating the trace files, compressing their headers, the metadata
            // record, the thread's buffer: ~0.4-0.6 ms) made the issue of an asynchronous
            // H5Fcreate_async 2-3x vol-async's own (docs/ASYNC.md).
            trace::start(&parsed.config, || parsed.text());
        }
        // SAFETY: valid out-pointer per the VOL contract.
        unsafe { *info = Box::into_raw(Box::new(parsed)).cast() };
        Ok(0)
    })
}

pub unsafe extern "C" fn info_copy(info: *const c_void) -> *mut c_void {
    guard(std::ptr::null_mut(), Op::InfoCopy, || {
        // SAFETY: info is an Info we created.
        let i = unsafe { info.cast::<Info>().as_ref() }.ok_or("NULL info")?;
        // Shared, not copied: see `Info`.
        Ok(Box::into_raw(Box::new(Info(i.0.clone()))).cast())
    })
}

pub unsafe extern "C" fn info_cmp(cmp: *mut c_int, a: *const c_void, b2: *const c_void) -> herr_t {
    guard(-1, Op::InfoCmp, || {
        // SAFETY: both are Infos we created; cmp is a valid out-pointer.
        let (a, c) = unsafe { (a.cast::<Info>().as_ref(), b2.cast::<Info>().as_ref()) };
        let (a, c) = (a.ok_or("NULL info")?, c.ok_or("NULL info")?);
        if Arc::ptr_eq(&a.0, &c.0) {
            // Copies of one info (see `Info`).
            // SAFETY: valid out-pointer.
            unsafe { *cmp = 0 };
            return Ok(0);
        }
        let mut v: c_int = 0;
        // SAFETY: valid ids and out-pointer.
        unsafe { b::H5VLcmp_connector_cls(&mut v, a.under.id(), c.under.id()) };
        if v == 0 {
            // SAFETY: infos of the same connector class.
            unsafe { b::H5VLcmp_connector_info(&mut v, a.under.id(), a.under_info, c.under_info) };
        }
        if v == 0 {
            v = a.parsed.options.cmp(&c.parsed.options) as c_int;
        }
        // SAFETY: valid out-pointer.
        unsafe { *cmp = v };
        Ok(0)
    })
}

pub unsafe extern "C" fn info_free(info: *mut c_void) -> herr_t {
    guard(-1, Op::InfoFree, || {
        if !info.is_null() {
            // SAFETY: an Info we boxed; HDF5 frees each info exactly once.
            drop(unsafe { Box::from_raw(info.cast::<Info>()) });
        }
        Ok(0)
    })
}

pub unsafe extern "C" fn info_to_str(info: *const c_void, out: *mut *mut c_char) -> herr_t {
    guard(-1, Op::InfoToStr, || {
        // SAFETY: an Info we created.
        let i = unsafe { info.cast::<Info>().as_ref() }.ok_or("NULL info")?;
        let mut under_str: *mut c_char = std::ptr::null_mut();
        // SAFETY: valid id and out-pointer; the under string is HDF5-allocated.
        let under_text = unsafe {
            b::H5VLconnector_info_to_str(i.under_info, i.under.id(), &mut under_str);
            let t = cstr(under_str).into_owned();
            if !under_str.is_null() {
                b::H5free_memory(under_str.cast());
            }
            t
        };
        let p = ConnectorInfo {
            under: Under::Value(i.under.value().max(0) as u32),
            under_info: under_text,
            options: i.parsed.options.clone(),
            path_bytes: i.parsed.path_bytes.clone(),
        };
        let text = CString::new(p.to_info_bytes()).map_err(|_| "NUL in info")?;
        let bytes = text.as_bytes_with_nul();
        // SAFETY: HDF5 frees the string with its own allocator, so allocate with it.
        unsafe {
            let dst = b::H5allocate_memory(bytes.len(), false).cast::<u8>();
            if dst.is_null() {
                return Err("cannot allocate the info string".into());
            }
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), dst, bytes.len());
            *out = dst.cast();
        }
        Ok(0)
    })
}

/// Takes the h5prov info out of a FAPL (a copy we own), if it has one. A FAPL without
/// info gets the documented defaults when `HDF5_VOL_CONNECTOR` names h5prov bare (see
/// [`bare_name_info`]).
///
/// # Safety
/// `fapl` is a property list id.
pub(super) unsafe fn fapl_info(fapl: hid_t) -> Option<Box<Info>> {
    let mut p: *mut c_void = std::ptr::null_mut();
    // SAFETY: valid out-pointer; the returned copy was made by info_copy.
    let r = quietly(|| unsafe { b::H5Pget_vol_info(fapl, &mut p) });
    if r < 0 || p.is_null() {
        return bare_name_info();
    }
    // SAFETY: HDF5 copied our info with info_copy; we own it now.
    Some(unsafe { Box::from_raw(p.cast::<Info>()) })
}

/// `HDF5_VOL_CONNECTOR=h5prov` (or `"h5prov "`) with no options:
/// HDF5 then puts no connector info at all on the default FAPL, and the user expects the
/// documented defaults (native underneath, `./h5prov-traces`). Only then: a FAPL without
/// info while the variable names another connector is HDF5 probing plugins after a failed
/// open, which must stay a clean failure with no trace written.
fn bare_name_info() -> Option<Box<Info>> {
    if env_h5prov_options()?.is_empty() {
        info_from_text("").ok().map(Box::new)
    } else {
        None
    }
}

/// When `HDF5_VOL_CONNECTOR` names h5prov: the options after the name, trimmed. Compared
/// as bytes, since the variable need not be UTF-8.
fn env_h5prov_options() -> Option<Vec<u8>> {
    use std::os::unix::ffi::OsStrExt;
    let v = std::env::var_os("HDF5_VOL_CONNECTOR")?;
    let rest = v.as_bytes().trim_ascii().strip_prefix(b"h5prov")?;
    // The whole name: "h5provX" is another connector.
    if rest.first().is_some_and(|b| !b.is_ascii_whitespace()) {
        return None;
    }
    Some(rest.trim_ascii().to_vec())
}

/// A copy of `fapl` whose VOL is the under connector.
///
/// # Safety
/// `fapl` is a FAPL id.
pub(super) unsafe fn under_fapl(fapl: hid_t, info: &Info) -> Result<hid_t, Error> {
    // SAFETY: plain property list calls.
    unsafe {
        let f = b::H5Pcopy(fapl);
        if f < 0 {
            return Err("cannot copy the file access property list".into());
        }
        if b::H5Pset_vol(f, info.under.id(), info.under_info) < 0 {
            b::H5Pclose(f);
            return Err("cannot set the under connector on the FAPL".into());
        }
        Ok(f)
    }
}

/// An under FAPL ([`under_fapl`]) kept past its call, closed when dropped.
pub(super) struct UnderFapl(pub(super) hid_t);

impl Drop for UnderFapl {
    fn drop(&mut self) {
        let f = self.0;
        // SAFETY: our own copy, closed once; a failure (HDF5 shutting down) is not the
        // application's error.
        quietly(|| unsafe { b::H5Pclose(f) });
    }
}

//! The unsafe half of the declarative table of every `H5VL_class_t` slot, whose rows are
//! in [`crate::ops`] (which makes the [`Op`] enum from them). From the same rows the macro
//! here generates:
//! - the `extern "C"` trampolines of the mechanical shapes (`open`, `call`, `plain`,
//!   `close`), each one guard around a call into a shape function of `ffi`; a `call` row
//!   with `iterates_at = loc` (the `specific` callbacks that iterate or visit) runs its
//!   under call through `callbacks::iterating`, which names the object HDF5 opens for it;
//! - [`fill_class`], which puts every trampoline or hand-written callback (`custom`) into
//!   its slot. There is no second, positional list of callbacks to keep in sync.

use super::callbacks;
use super::{guard, shape_call, shape_close, shape_open, shape_plain, sub_of, Opening};
use crate::ops::{vol_table_rows, Op};
use crate::tree::Kind;
use h5prov_bindings::*;
use std::ffi::{c_char, c_int, c_void};
use std::marker::PhantomData;

type Req = *mut *mut c_void;
type Loc = *const H5VL_loc_params_t;

macro_rules! vol_table {
    ( $( $field:ident . $slot:ident => $op:ident $name:literal $lvl:ident : $shape:ident $body:tt ; )* ) => {
        $( vol_table!(@tramp $op $shape $body); )*

        /// Fills every callback slot of the class struct from the table.
        pub fn fill_class(cls: &mut H5VL_class_t) {
            $( vol_table!(@set cls $field $slot $shape $body); )*
        }
    };

    // ---- trampolines -----------------------------------------------------------------
    (@tramp $op:ident custom $body:tt) => {};
    (@tramp $op:ident open ( fn $f:ident ( $obj:ident ; $($a:ident : $t:ty),* ; $req:ident )
        kind = $kind:expr, name = $nm:expr, loc = $loc:expr, dxpl = $dxpl:expr,
        created = $created:expr, dataset = $dset:expr $(, dapl = $dapl:expr)?
        => |$o:ident, $v:ident| $call:expr )) => {
        unsafe extern "C" fn $f($obj: *mut c_void, $($a: $t,)* $req: Req) -> *mut c_void {
            guard(std::ptr::null_mut(), Op::$op, || {
                let open = Opening { kind: $kind, name: $nm, loc: $loc, dxpl: $dxpl,
                                     created: $created, dataset: $dset,
                                     dapl: vol_table!(@dapl $($dapl)?), _p: PhantomData };
                // SAFETY: HDF5 calls this slot with the arguments of its VOL prototype; the
                // closure forwards them unchanged to the matching H5VL* pass-through call.
                unsafe { shape_open(Op::$op, $obj, $req, open, |$o, $v| $call) }
            })
        }
    };
    (@tramp $op:ident call ( fn $f:ident ( $obj:ident ; $($a:ident : $t:ty),* ; $req:ident )
        sub = $sub:expr => |$o:ident, $v:ident| $call:expr )) => {
        unsafe extern "C" fn $f($obj: *mut c_void, $($a: $t,)* $req: Req) -> herr_t {
            guard(-1, Op::$op, || {
                let sub: u32 = $sub;
                // SAFETY: as for `open` trampolines.
                unsafe { shape_call(Op::$op, sub, $obj, $req, |$o, $v| $call) }
            })
        }
    };
    // An iteration or visit: the object HDF5 opens for it is named by `$at` (`iterating`).
    (@tramp $op:ident call ( fn $f:ident ( $obj:ident ; $($a:ident : $t:ty),* ; $req:ident )
        sub = $sub:expr, iterates_at = $at:expr => |$o:ident, $v:ident| $call:expr )) => {
        unsafe extern "C" fn $f($obj: *mut c_void, $($a: $t,)* $req: Req) -> herr_t {
            guard(-1, Op::$op, || {
                let sub: u32 = $sub;
                // SAFETY: as for `open` trampolines; `$at` is valid for the call.
                unsafe {
                    shape_call(Op::$op, sub, $obj, $req, |$o, $v| {
                        callbacks::iterating(Op::$op, sub, $obj, $at, || $call)
                    })
                }
            })
        }
    };
    (@tramp $op:ident close ( fn $f:ident ( $obj:ident ; $($a:ident : $t:ty),* ; $req:ident )
        => |$o:ident, $v:ident| $call:expr )) => {
        unsafe extern "C" fn $f($obj: *mut c_void, $($a: $t,)* $req: Req) -> herr_t {
            guard(-1, Op::$op, || {
                // SAFETY: as for `open` trampolines; HDF5 drops obj after a successful close.
                unsafe { shape_close(Op::$op, $obj, $req, |$o, $v| $call) }
            })
        }
    };
    (@tramp $op:ident plain ( fn $f:ident ( $obj:ident ; $($a:ident : $t:ty),* )
        sub = $sub:expr => |$o:ident, $v:ident| $call:expr )) => {
        unsafe extern "C" fn $f($obj: *mut c_void, $($a: $t,)*) -> herr_t {
            guard(-1, Op::$op, || {
                let sub: u32 = $sub;
                // SAFETY: as for `open` trampolines.
                unsafe { shape_plain(Op::$op, sub, $obj, |$o, $v| $call) }
            })
        }
    };

    (@dapl) => { -1 };
    (@dapl $d:expr) => { $d };

    // ---- slot assignment -------------------------------------------------------------
    (@set $cls:ident top $slot:ident custom ( $f:path )) => { $cls.$slot = Some($f); };
    (@set $cls:ident $field:ident $slot:ident custom ( $f:path )) => { $cls.$field.$slot = Some($f); };
    (@set $cls:ident $field:ident $slot:ident $shape:ident ( fn $f:ident $($rest:tt)* )) => {
        $cls.$field.$slot = Some($f);
    };
}

const NONE: u32 = crate::subops::NONE;

vol_table_rows!(vol_table);

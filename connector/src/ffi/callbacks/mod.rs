//! The callbacks with special logic, following HDF5's `src/H5VLpassthru.c`, one file per
//! concern; the table's rows (`crate::ops`) name them through the re-exports here:
//! - `info`: h5prov's connector info (shared by every copy) and the `info_cls` callbacks;
//! - `lifecycle`: connector life cycle and introspection;
//! - `wrap`: objects HDF5 wraps outside h5prov's callbacks;
//! - `file`: file create/open/specific/close (the FAPL's VOL is swapped for the under
//!   connector's);
//! - `data_io`: data I/O (bytes and selections recorded);
//! - `objects`: callbacks whose arguments carry other objects (unwrapped);
//! - `request`: requests (wait, notify, cancel, free).

mod data_io;
mod file;
mod info;
mod lifecycle;
mod objects;
mod request;
mod wrap;

pub use data_io::{attr_read, attr_write, dataset_read, dataset_specific, dataset_write};
pub use file::{file_close, file_create, file_open, file_specific};
pub use info::{info_cmp, info_copy, info_free, info_from_str, info_to_str, Info, InfoData};
pub use lifecycle::{get_cap_flags, get_conn_cls, initialize, terminate};
pub use objects::{
    generic_optional, group_specific, link_copy, link_create, link_move, object_copy, object_open,
};
pub use request::{request_cancel, request_free, request_notify, request_wait};
pub use wrap::{free_wrap_ctx, get_object, get_wrap_ctx, iterating, unwrap_object, wrap_object};

use std::ffi::c_void;

const NONE: u32 = crate::subops::NONE;
type Req = *mut *mut c_void;

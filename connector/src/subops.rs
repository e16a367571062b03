//! Names of the sub-operations of `get`, `specific` and `optional` callbacks, indexed by the
//! `op_type` values of `H5VLconnector.h` and `H5VLnative.h` (HDF5 1.14). Unknown values are
//! written as their number.

use crate::ops::Op;

const ATTR_GET: &[&str] = &["acpl", "info", "name", "space", "storage_size", "type"];
const ATTR_SPECIFIC: &[&str] = &["delete", "delete_by_idx", "exists", "iter", "rename"];
const DATASET_GET: &[&str] = &[
    "dapl",
    "dcpl",
    "space",
    "space_status",
    "storage_size",
    "type",
];
const DATASET_SPECIFIC: &[&str] = &["set_extent", "flush", "refresh"];
const DATATYPE_GET: &[&str] = &["binary_size", "binary", "tcpl"];
const DATATYPE_SPECIFIC: &[&str] = &["flush", "refresh"];
const FILE_GET: &[&str] = &[
    "cont_info",
    "fapl",
    "fcpl",
    "fileno",
    "intent",
    "name",
    "obj_count",
    "obj_ids",
];
const FILE_SPECIFIC: &[&str] = &["flush", "reopen", "is_accessible", "delete", "is_equal"];
const GROUP_GET: &[&str] = &["gcpl", "info"];
const GROUP_SPECIFIC: &[&str] = &["mount", "unmount", "flush", "refresh"];
const LINK_CREATE: &[&str] = &["hard", "soft", "ud"];
const LINK_GET: &[&str] = &["info", "name", "val"];
const LINK_SPECIFIC: &[&str] = &["delete", "exists", "iter"];
const OBJECT_GET: &[&str] = &["file", "name", "type", "info"];
const OBJECT_SPECIFIC: &[&str] = &[
    "change_ref_count",
    "exists",
    "lookup",
    "visit",
    "flush",
    "refresh",
];
const REQUEST_SPECIFIC: &[&str] = &["get_err_stack", "get_exec_time"];
const BLOB_SPECIFIC: &[&str] = &["delete", "isnull", "setnull"];

const NATIVE_ATTR_OPT: &[&str] = &["iterate_old"];
const NATIVE_DATASET_OPT: &[&str] = &[
    "format_convert",
    "get_chunk_index_type",
    "get_chunk_storage_size",
    "get_num_chunks",
    "get_chunk_info_by_idx",
    "get_chunk_info_by_coord",
    "chunk_read",
    "chunk_write",
    "get_vlen_buf_size",
    "get_offset",
    "chunk_iter",
];
const NATIVE_FILE_OPT: &[&str] = &[
    "clear_elink_cache",
    "get_file_image",
    "get_free_sections",
    "get_free_space",
    "get_info",
    "get_mdc_conf",
    "get_mdc_hr",
    "get_mdc_size",
    "get_size",
    "get_vfd_handle",
    "reset_mdc_hit_rate",
    "set_mdc_config",
    "get_metadata_read_retry_info",
    "start_swmr_write",
    "start_mdc_logging",
    "stop_mdc_logging",
    "get_mdc_logging_status",
    "format_convert",
    "reset_page_buffering_stats",
    "get_page_buffering_stats",
    "get_mdc_image_info",
    "get_eoa",
    "incr_filesize",
    "set_libver_bounds",
    "get_min_dset_ohdr_flag",
    "set_min_dset_ohdr_flag",
    "get_mpi_atomicity",
    "set_mpi_atomicity",
    "post_open",
];
const NATIVE_GROUP_OPT: &[&str] = &["iterate_old", "get_objinfo"];
const NATIVE_OBJECT_OPT: &[&str] = &[
    "get_comment",
    "set_comment",
    "disable_mdc_flushes",
    "enable_mdc_flushes",
    "are_mdc_flushes_disabled",
    "get_native_info",
];

const NUMBERS: [&str; 64] = [
    "0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "13", "14", "15", "16",
    "17", "18", "19", "20", "21", "22", "23", "24", "25", "26", "27", "28", "29", "30", "31", "32",
    "33", "34", "35", "36", "37", "38", "39", "40", "41", "42", "43", "44", "45", "46", "47", "48",
    "49", "50", "51", "52", "53", "54", "55", "56", "57", "58", "59", "60", "61", "62", "63",
];

/// No sub-operation.
pub const NONE: u32 = u32::MAX;

/// The table of sub-operation names for `op`, if it has sub-operations.
fn table(op: Op) -> Option<&'static [&'static str]> {
    use Op::*;
    Some(match op {
        AttrGet => ATTR_GET,
        AttrSpecific => ATTR_SPECIFIC,
        AttrOptional => NATIVE_ATTR_OPT,
        DatasetGet => DATASET_GET,
        DatasetSpecific => DATASET_SPECIFIC,
        DatasetOptional => NATIVE_DATASET_OPT,
        DatatypeGet => DATATYPE_GET,
        DatatypeSpecific => DATATYPE_SPECIFIC,
        FileGet => FILE_GET,
        FileSpecific => FILE_SPECIFIC,
        FileOptional => NATIVE_FILE_OPT,
        GroupGet => GROUP_GET,
        GroupSpecific => GROUP_SPECIFIC,
        GroupOptional => NATIVE_GROUP_OPT,
        LinkCreate => LINK_CREATE,
        LinkGet => LINK_GET,
        LinkSpecific => LINK_SPECIFIC,
        ObjectGet => OBJECT_GET,
        ObjectSpecific => OBJECT_SPECIFIC,
        ObjectOptional => NATIVE_OBJECT_OPT,
        RequestSpecific => REQUEST_SPECIFIC,
        BlobSpecific => BLOB_SPECIFIC,
        _ => return None,
    })
}

/// The name of sub-operation `sub` of `op`: a known name, else its number, else `"?"`.
pub fn name(op: Op, sub: u32) -> &'static str {
    if sub == NONE {
        return "";
    }
    if let Some(name) = table(op).and_then(|t| t.get(sub as usize)) {
        return name;
    }
    NUMBERS.get(sub as usize).copied().unwrap_or("?")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(name(Op::FileSpecific, 0), "flush");
        assert_eq!(name(Op::LinkGet, 0), "info");
        assert_eq!(name(Op::DatasetOptional, 7), "chunk_write");
        assert_eq!(name(Op::DatasetOptional, 40), "40");
        assert_eq!(name(Op::GenericOptional, 3), "3");
        assert_eq!(name(Op::FileSpecific, 1000), "?");
        assert_eq!(name(Op::FileClose, NONE), "");
    }
}

//! The declarative table of every `H5VL_class_t` slot, and the [`Op`] enum made from it.
//!
//! One entry per callback: `class_field.slot => OpVariant "trace.name" MinLevel : shape(...)`.
//! The table is the macro `vol_table_rows!`, which hands its rows to a macro it is given:
//! here `op_enum!` makes [`Op`] (the names the tracer records, and the minimum trace levels);
//! `ffi/table.rs` makes the `extern "C"` trampolines of the mechanical shapes and fills the
//! class struct from the same rows. The rows' bodies (the under-connector calls) are only
//! tokens here: they are compiled where `ffi/table.rs` expands them, the one place for
//! unsafe code, and their paths resolve there. There is no second list of callbacks to keep
//! in sync, and the tracer's layers need nothing from `ffi` to name an operation.
//!
//! `MinLevel` is the lowest `level=` at which the callback is recorded (`Never` for
//! framework callbacks such as info copy and object wrapping).

use crate::config::Level;

/// Minimum level pseudo-variant for callbacks that are never recorded.
#[allow(non_upper_case_globals)]
const Never: Option<Level> = None;
#[allow(non_upper_case_globals)]
const File: Option<Level> = Some(Level::File);
#[allow(non_upper_case_globals)]
const Group: Option<Level> = Some(Level::Group);
#[allow(non_upper_case_globals)]
const Dataset: Option<Level> = Some(Level::Dataset);
#[allow(non_upper_case_globals)]
const Element: Option<Level> = Some(Level::Element);

/// The table: `vol_table_rows!(m)` expands to `m! { rows }`.
macro_rules! vol_table_rows {
    ($m:ident) => {
        $m! {
        // ---- connector and framework -------------------------------------------------------
        top.initialize => Initialize "connector.initialize" Never: custom(callbacks::initialize);
        top.terminate => Terminate "connector.terminate" Never: custom(callbacks::terminate);
        info_cls.copy => InfoCopy "info.copy" Never: custom(callbacks::info_copy);
        info_cls.cmp => InfoCmp "info.cmp" Never: custom(callbacks::info_cmp);
        info_cls.free => InfoFree "info.free" Never: custom(callbacks::info_free);
        info_cls.to_str => InfoToStr "info.to_str" Never: custom(callbacks::info_to_str);
        info_cls.from_str => InfoFromStr "info.from_str" Never: custom(callbacks::info_from_str);
        wrap_cls.get_object => WrapGetObject "wrap.get_object" Never: custom(callbacks::get_object);
        wrap_cls.get_wrap_ctx => WrapGetCtx "wrap.get_wrap_ctx" Never: custom(callbacks::get_wrap_ctx);
        wrap_cls.wrap_object => WrapObject "wrap.wrap_object" Never: custom(callbacks::wrap_object);
        wrap_cls.unwrap_object => UnwrapObject "wrap.unwrap_object" Never: custom(callbacks::unwrap_object);
        wrap_cls.free_wrap_ctx => WrapFreeCtx "wrap.free_wrap_ctx" Never: custom(callbacks::free_wrap_ctx);

        // ---- attributes ----------------------------------------------------------------------
        attr_cls.create => AttrCreate "attr.create" Dataset: open(fn attr_create(obj; loc: Loc,
            name: *const c_char, type_id: hid_t, space_id: hid_t, acpl: hid_t, aapl: hid_t, dxpl: hid_t; req)
            kind = Kind::Attr, name = name, loc = loc, dxpl = dxpl, created = true,
            dataset = Some((type_id, space_id, -1))
            => |o, v| H5VLattr_create(o, loc, v, name, type_id, space_id, acpl, aapl, dxpl, req));
        attr_cls.open => AttrOpen "attr.open" Dataset: open(fn attr_open(obj; loc: Loc,
            name: *const c_char, aapl: hid_t, dxpl: hid_t; req)
            kind = Kind::Attr, name = name, loc = loc, dxpl = dxpl, created = false, dataset = None
            => |o, v| H5VLattr_open(o, loc, v, name, aapl, dxpl, req));
        attr_cls.read => AttrRead "attr.read" Dataset: custom(callbacks::attr_read);
        attr_cls.write => AttrWrite "attr.write" Dataset: custom(callbacks::attr_write);
        attr_cls.get => AttrGet "attr.get" Dataset: call(fn attr_get(obj;
            args: *mut H5VL_attr_get_args_t, dxpl: hid_t; req) sub = sub_of!(args)
            => |o, v| H5VLattr_get(o, v, args, dxpl, req));
        attr_cls.specific => AttrSpecific "attr.specific" Dataset: call(fn attr_specific(obj; loc: Loc,
            args: *mut H5VL_attr_specific_args_t, dxpl: hid_t; req) sub = sub_of!(args),
            iterates_at = loc
            => |o, v| H5VLattr_specific(o, loc, v, args, dxpl, req));
        attr_cls.optional => AttrOptional "attr.optional" Dataset: call(fn attr_optional(obj;
            args: *mut H5VL_optional_args_t, dxpl: hid_t; req) sub = sub_of!(args)
            => |o, v| H5VLattr_optional(o, v, args, dxpl, req));
        attr_cls.close => AttrClose "attr.close" Dataset: close(fn attr_close(obj; dxpl: hid_t; req)
            => |o, v| H5VLattr_close(o, v, dxpl, req));

        // ---- datasets ------------------------------------------------------------------------
        dataset_cls.create => DatasetCreate "dataset.create" Dataset: open(fn dataset_create(obj; loc: Loc,
            name: *const c_char, lcpl: hid_t, type_id: hid_t, space_id: hid_t, dcpl: hid_t, dapl: hid_t,
            dxpl: hid_t; req)
            kind = Kind::Dataset, name = name, loc = loc, dxpl = dxpl, created = true,
            dataset = Some((type_id, space_id, dcpl)), dapl = dapl
            => |o, v| H5VLdataset_create(o, loc, v, name, lcpl, type_id, space_id, dcpl, dapl, dxpl, req));
        dataset_cls.open => DatasetOpen "dataset.open" Dataset: open(fn dataset_open(obj; loc: Loc,
            name: *const c_char, dapl: hid_t, dxpl: hid_t; req)
            kind = Kind::Dataset, name = name, loc = loc, dxpl = dxpl, created = false, dataset = None,
            dapl = dapl
            => |o, v| H5VLdataset_open(o, loc, v, name, dapl, dxpl, req));
        dataset_cls.read => DatasetRead "dataset.read" Dataset: custom(callbacks::dataset_read);
        dataset_cls.write => DatasetWrite "dataset.write" Dataset: custom(callbacks::dataset_write);
        dataset_cls.get => DatasetGet "dataset.get" Dataset: call(fn dataset_get(obj;
            args: *mut H5VL_dataset_get_args_t, dxpl: hid_t; req) sub = sub_of!(args)
            => |o, v| H5VLdataset_get(o, v, args, dxpl, req));
        dataset_cls.specific => DatasetSpecific "dataset.specific" Dataset: custom(callbacks::dataset_specific);
        dataset_cls.optional => DatasetOptional "dataset.optional" Dataset: call(fn dataset_optional(obj;
            args: *mut H5VL_optional_args_t, dxpl: hid_t; req) sub = sub_of!(args)
            => |o, v| H5VLdataset_optional(o, v, args, dxpl, req));
        dataset_cls.close => DatasetClose "dataset.close" Dataset: close(fn dataset_close(obj; dxpl: hid_t; req)
            => |o, v| H5VLdataset_close(o, v, dxpl, req));

        // ---- committed datatypes -------------------------------------------------------------
        datatype_cls.commit => DatatypeCommit "datatype.commit" Dataset: open(fn datatype_commit(obj; loc: Loc,
            name: *const c_char, type_id: hid_t, lcpl: hid_t, tcpl: hid_t, tapl: hid_t, dxpl: hid_t; req)
            kind = Kind::Datatype, name = name, loc = loc, dxpl = dxpl, created = true, dataset = None
            => |o, v| H5VLdatatype_commit(o, loc, v, name, type_id, lcpl, tcpl, tapl, dxpl, req));
        datatype_cls.open => DatatypeOpen "datatype.open" Dataset: open(fn datatype_open(obj; loc: Loc,
            name: *const c_char, tapl: hid_t, dxpl: hid_t; req)
            kind = Kind::Datatype, name = name, loc = loc, dxpl = dxpl, created = false, dataset = None
            => |o, v| H5VLdatatype_open(o, loc, v, name, tapl, dxpl, req));
        datatype_cls.get => DatatypeGet "datatype.get" Dataset: call(fn datatype_get(obj;
            args: *mut H5VL_datatype_get_args_t, dxpl: hid_t; req) sub = sub_of!(args)
            => |o, v| H5VLdatatype_get(o, v, args, dxpl, req));
        datatype_cls.specific => DatatypeSpecific "datatype.specific" Dataset: call(fn datatype_specific(obj;
            args: *mut H5VL_datatype_specific_args_t, dxpl: hid_t; req) sub = sub_of!(args)
            => |o, v| H5VLdatatype_specific(o, v, args, dxpl, req));
        datatype_cls.optional => DatatypeOptional "datatype.optional" Dataset: call(fn datatype_optional(obj;
            args: *mut H5VL_optional_args_t, dxpl: hid_t; req) sub = sub_of!(args)
            => |o, v| H5VLdatatype_optional(o, v, args, dxpl, req));
        datatype_cls.close => DatatypeClose "datatype.close" Dataset: close(fn datatype_close(obj; dxpl: hid_t; req)
            => |o, v| H5VLdatatype_close(o, v, dxpl, req));

        // ---- files ---------------------------------------------------------------------------
        file_cls.create => FileCreate "file.create" File: custom(callbacks::file_create);
        file_cls.open => FileOpen "file.open" File: custom(callbacks::file_open);
        file_cls.get => FileGet "file.get" File: call(fn file_get(obj;
            args: *mut H5VL_file_get_args_t, dxpl: hid_t; req) sub = sub_of!(args)
            => |o, v| H5VLfile_get(o, v, args, dxpl, req));
        file_cls.specific => FileSpecific "file.specific" File: custom(callbacks::file_specific);
        file_cls.optional => FileOptional "file.optional" File: call(fn file_optional(obj;
            args: *mut H5VL_optional_args_t, dxpl: hid_t; req) sub = sub_of!(args)
            => |o, v| H5VLfile_optional(o, v, args, dxpl, req));
        file_cls.close => FileClose "file.close" File: custom(callbacks::file_close);

        // ---- groups --------------------------------------------------------------------------
        group_cls.create => GroupCreate "group.create" Group: open(fn group_create(obj; loc: Loc,
            name: *const c_char, lcpl: hid_t, gcpl: hid_t, gapl: hid_t, dxpl: hid_t; req)
            kind = Kind::Group, name = name, loc = loc, dxpl = dxpl, created = true, dataset = None
            => |o, v| H5VLgroup_create(o, loc, v, name, lcpl, gcpl, gapl, dxpl, req));
        group_cls.open => GroupOpen "group.open" Group: open(fn group_open(obj; loc: Loc,
            name: *const c_char, gapl: hid_t, dxpl: hid_t; req)
            kind = Kind::Group, name = name, loc = loc, dxpl = dxpl, created = false, dataset = None
            => |o, v| H5VLgroup_open(o, loc, v, name, gapl, dxpl, req));
        group_cls.get => GroupGet "group.get" Group: call(fn group_get(obj;
            args: *mut H5VL_group_get_args_t, dxpl: hid_t; req) sub = sub_of!(args)
            => |o, v| H5VLgroup_get(o, v, args, dxpl, req));
        group_cls.specific => GroupSpecific "group.specific" Group: custom(callbacks::group_specific);
        group_cls.optional => GroupOptional "group.optional" Group: call(fn group_optional(obj;
            args: *mut H5VL_optional_args_t, dxpl: hid_t; req) sub = sub_of!(args)
            => |o, v| H5VLgroup_optional(o, v, args, dxpl, req));
        group_cls.close => GroupClose "group.close" Group: close(fn group_close(obj; dxpl: hid_t; req)
            => |o, v| H5VLgroup_close(o, v, dxpl, req));

        // ---- links ---------------------------------------------------------------------------
        link_cls.create => LinkCreate "link.create" Group: custom(callbacks::link_create);
        link_cls.copy => LinkCopy "link.copy" Group: custom(callbacks::link_copy);
        link_cls.move_ => LinkMove "link.move" Group: custom(callbacks::link_move);
        link_cls.get => LinkGet "link.get" Group: call(fn link_get(obj; loc: Loc,
            args: *mut H5VL_link_get_args_t, dxpl: hid_t; req) sub = sub_of!(args)
            => |o, v| H5VLlink_get(o, loc, v, args, dxpl, req));
        link_cls.specific => LinkSpecific "link.specific" Group: call(fn link_specific(obj; loc: Loc,
            args: *mut H5VL_link_specific_args_t, dxpl: hid_t; req) sub = sub_of!(args),
            iterates_at = loc
            => |o, v| H5VLlink_specific(o, loc, v, args, dxpl, req));
        link_cls.optional => LinkOptional "link.optional" Group: call(fn link_optional(obj; loc: Loc,
            args: *mut H5VL_optional_args_t, dxpl: hid_t; req) sub = sub_of!(args)
            => |o, v| H5VLlink_optional(o, loc, v, args, dxpl, req));

        // ---- objects -------------------------------------------------------------------------
        object_cls.open => ObjectOpen "object.open" Dataset: custom(callbacks::object_open);
        object_cls.copy => ObjectCopy "object.copy" Dataset: custom(callbacks::object_copy);
        object_cls.get => ObjectGet "object.get" Dataset: call(fn object_get(obj; loc: Loc,
            args: *mut H5VL_object_get_args_t, dxpl: hid_t; req) sub = sub_of!(args)
            => |o, v| H5VLobject_get(o, loc, v, args, dxpl, req));
        object_cls.specific => ObjectSpecific "object.specific" Dataset: call(fn object_specific(obj; loc: Loc,
            args: *mut H5VL_object_specific_args_t, dxpl: hid_t; req) sub = sub_of!(args),
            iterates_at = loc
            => |o, v| H5VLobject_specific(o, loc, v, args, dxpl, req));
        object_cls.optional => ObjectOptional "object.optional" Dataset: call(fn object_optional(obj; loc: Loc,
            args: *mut H5VL_optional_args_t, dxpl: hid_t; req) sub = sub_of!(args)
            => |o, v| H5VLobject_optional(o, loc, v, args, dxpl, req));

        // ---- introspection -------------------------------------------------------------------
        introspect_cls.get_conn_cls => IntrospectGetConnCls "introspect.get_conn_cls" Never:
            custom(callbacks::get_conn_cls);
        introspect_cls.get_cap_flags => IntrospectGetCapFlags "introspect.get_cap_flags" Never:
            custom(callbacks::get_cap_flags);
        introspect_cls.opt_query => IntrospectOptQuery "introspect.opt_query" Never: plain(fn opt_query(obj;
            cls: H5VL_subclass_t, opt_type: c_int, flags: *mut u64) sub = NONE
            => |o, v| H5VLintrospect_opt_query(o, v, cls, opt_type, flags));

        // ---- async requests ------------------------------------------------------------------
        request_cls.wait => RequestWait "request.wait" Dataset: custom(callbacks::request_wait);
        request_cls.notify => RequestNotify "request.notify" Dataset: custom(callbacks::request_notify);
        request_cls.cancel => RequestCancel "request.cancel" Dataset: custom(callbacks::request_cancel);
        request_cls.specific => RequestSpecific "request.specific" Element: plain(fn request_specific(obj;
            args: *mut H5VL_request_specific_args_t) sub = sub_of!(args)
            => |o, v| H5VLrequest_specific(o, v, args));
        request_cls.optional => RequestOptional "request.optional" Element: plain(fn request_optional(obj;
            args: *mut H5VL_optional_args_t) sub = sub_of!(args)
            => |o, v| H5VLrequest_optional(o, v, args));
        request_cls.free => RequestFree "request.free" Element: custom(callbacks::request_free);

        // ---- blobs (variable-length data, references) ----------------------------------------
        blob_cls.put => BlobPut "blob.put" Element: plain(fn blob_put(obj;
            buf: *const c_void, size: usize, blob_id: *mut c_void, ctx: *mut c_void) sub = NONE
            => |o, v| H5VLblob_put(o, v, buf, size, blob_id, ctx));
        blob_cls.get => BlobGet "blob.get" Element: plain(fn blob_get(obj;
            blob_id: *const c_void, buf: *mut c_void, size: usize, ctx: *mut c_void) sub = NONE
            => |o, v| H5VLblob_get(o, v, blob_id, buf, size, ctx));
        blob_cls.specific => BlobSpecific "blob.specific" Element: plain(fn blob_specific(obj;
            blob_id: *mut c_void, args: *mut H5VL_blob_specific_args_t) sub = sub_of!(args)
            => |o, v| H5VLblob_specific(o, v, blob_id, args));
        blob_cls.optional => BlobOptional "blob.optional" Element: plain(fn blob_optional(obj;
            blob_id: *mut c_void, args: *mut H5VL_optional_args_t) sub = sub_of!(args)
            => |o, v| H5VLblob_optional(o, v, blob_id, args));

        // ---- tokens --------------------------------------------------------------------------
        token_cls.cmp => TokenCmp "token.cmp" Element: plain(fn token_cmp(obj;
            t1: *const H5O_token_t, t2: *const H5O_token_t, cmp: *mut c_int) sub = NONE
            => |o, v| H5VLtoken_cmp(o, v, t1, t2, cmp));
        token_cls.to_str => TokenToStr "token.to_str" Element: plain(fn token_to_str(obj;
            obj_type: H5I_type_t, token: *const H5O_token_t, s: *mut *mut c_char) sub = NONE
            => |o, v| H5VLtoken_to_str(o, obj_type, v, token, s));
        token_cls.from_str => TokenFromStr "token.from_str" Element: plain(fn token_from_str(obj;
            obj_type: H5I_type_t, s: *const c_char, token: *mut H5O_token_t) sub = NONE
            => |o, v| H5VLtoken_from_str(o, obj_type, v, s, token));

        // ---- catch-all -----------------------------------------------------------------------
        top.optional => GenericOptional "optional" Dataset: custom(callbacks::generic_optional);
        }
    };
}
pub(crate) use vol_table_rows;

/// Makes [`Op`] from the table's rows.
macro_rules! op_enum {
    ( $( $field:ident . $slot:ident => $op:ident $name:literal $lvl:ident : $shape:ident $body:tt ; )* ) => {
        /// Every VOL callback h5prov implements, in table order.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[repr(u16)]
        pub enum Op { $( #[doc = $name] $op, )* }

        impl Op {
            /// All operations, in table order.
            pub const ALL: &'static [Op] = &[ $( Op::$op, )* ];

            /// The trace name, `class.callback`.
            pub fn name(self) -> &'static str {
                match self { $( Op::$op => $name, )* }
            }

            /// Lowest level at which this operation is recorded; `None`: never.
            pub fn min_level(self) -> Option<Level> {
                match self { $( Op::$op => $lvl, )* }
            }
        }
    };
}

vol_table_rows!(op_enum);

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn names_are_unique_and_well_formed() {
        let mut seen = HashSet::new();
        for op in Op::ALL {
            let n = op.name();
            assert!(seen.insert(n), "duplicate op name {n}");
            assert!(
                n.chars()
                    .all(|c| c.is_ascii_lowercase() || c == '.' || c == '_'),
                "{n}"
            );
        }
        assert_eq!(Op::DatasetWrite.name(), "dataset.write");
        assert_eq!(Op::FileSpecific.name(), "file.specific");
    }
}

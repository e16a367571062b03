//! Generates `bindings/src/abi/`: one VOL ABI per HDF5 line, the items that are identical in
//! every line, and the table of HDF5 symbols h5prov resolves at run time.
//!
//! For each line (1.14 and 2.x) bindgen runs over the real headers (`hdf5.h`,
//! `H5VLconnector.h`, ...) and the output is split:
//! - `<line>.rs`: every type and constant of that line, with bindgen's compile-time layout
//!   assertions, plus [`LAYOUT`] as a table for the C layout probe, plus `LineSyms`: the
//!   functions and globals that exist in this line only (e.g. 1.14's
//!   `H5VL_pass_through_register`, 2.x's `H5VL_PASSTHRU_g`);
//! - `common.rs`: re-exports of the items whose definition is token-for-token the same in
//!   every line *and* that mention no item that differs (computed to a fixpoint). The
//!   connector compiles against these; anything else it must take from a line module, chosen
//!   at run time.
//! - `api.rs`: [`FUNCTIONS`] and [`GLOBALS`] that are the same in every line, as one typed
//!   table of pointers (`Api`) filled from the HDF5 library found at run time, with a
//!   `#[inline]` free function per non-variadic function that calls through the table.
//! - `DIFFERENCES.md`: what differs between the lines, for people.
// The generated code contains `unsafe`; this generator itself has none.
#![forbid(unsafe_code)]

use proc_macro2::{Ident, Span, TokenStream, TokenTree};
use quote::{format_ident, quote};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// One HDF5 line: its module name and the include directory of real headers.
#[derive(Debug, Clone)]
pub struct Line {
    /// Module name (`v1_14`, `v2`).
    pub module: String,
    /// Directory holding `hdf5.h`, `H5pubconf.h`, `H5VLconnector.h`, ...
    pub include: PathBuf,
}

/// The HDF5 functions h5prov calls. Each must exist in the HDF5 that loaded h5prov, or
/// h5prov refuses to register (naming the missing symbol). A function that exists in one
/// line only lands in that line's `LineSyms`.
pub const FUNCTIONS: &[&str] = &[
    // library
    "H5get_libversion",
    "H5is_library_threadsafe",
    "H5open",
    "H5free_memory",
    "H5allocate_memory",
    // errors
    "H5Eregister_class",
    "H5Eunregister_class",
    "H5Ecreate_msg",
    "H5Eclose_msg",
    "H5Epush2",
    "H5Eget_num",
    "H5Eclear2",
    "H5Eget_current_stack",
    "H5Eset_current_stack",
    // ids
    "H5Iinc_ref",
    "H5Idec_ref",
    "H5Iget_type",
    // property lists
    "H5Pclose",
    "H5Pcopy",
    "H5Pset_vol",
    "H5Pget_vol_info",
    "H5Pget_layout",
    "H5Pget_driver",
    "H5Pget",
    "H5Pget_chunk",
    "H5Pget_nfilters",
    "H5Pget_filter2",
    "H5Pget_fill_time",
    "H5Pget_alloc_time",
    "H5Pfill_value_defined",
    "H5Pget_alignment",
    "H5Pget_libver_bounds",
    // dataspaces and datatypes
    "H5Sclose",
    "H5Sget_simple_extent_ndims",
    "H5Sget_simple_extent_dims",
    "H5Sget_select_npoints",
    "H5Sget_select_type",
    "H5Sget_select_hyper_nblocks",
    "H5Sget_select_elem_npoints",
    "H5Sis_regular_hyperslab",
    "H5Sget_regular_hyperslab",
    "H5Sget_select_bounds",
    "H5Tclose",
    "H5Tget_size",
    "H5Tget_class",
    "H5Tget_order",
    "H5Tget_sign",
    "H5Tis_variable_str",
    // Compound member layouts: whether a memory compound matches the file's (conversion)
    "H5Tget_nmembers",
    "H5Tget_member_name",
    "H5Tget_member_offset",
    "H5Tget_member_class",
    // VOL: connector management
    "H5VLregister_connector_by_name",
    "H5VLregister_connector_by_value",
    "H5VLget_value",
    "H5VLcmp_connector_cls",
    "H5VLcopy_connector_info",
    "H5VLcmp_connector_info",
    "H5VLfree_connector_info",
    "H5VLconnector_info_to_str",
    "H5VLconnector_str_to_info",
    "H5VLget_object",
    "H5VLget_wrap_ctx",
    "H5VLwrap_object",
    "H5VLunwrap_object",
    "H5VLfree_wrap_ctx",
    "H5VL_pass_through_register",
    // VOL: pass-through calls to the under connector
    "H5VLattr_create",
    "H5VLattr_open",
    "H5VLattr_read",
    "H5VLattr_write",
    "H5VLattr_get",
    "H5VLattr_specific",
    "H5VLattr_optional",
    "H5VLattr_close",
    "H5VLdataset_create",
    "H5VLdataset_open",
    "H5VLdataset_read",
    "H5VLdataset_write",
    "H5VLdataset_get",
    "H5VLdataset_specific",
    "H5VLdataset_optional",
    "H5VLdataset_close",
    "H5VLdatatype_commit",
    "H5VLdatatype_open",
    "H5VLdatatype_get",
    "H5VLdatatype_specific",
    "H5VLdatatype_optional",
    "H5VLdatatype_close",
    "H5VLfile_create",
    "H5VLfile_open",
    "H5VLfile_get",
    "H5VLfile_specific",
    "H5VLfile_optional",
    "H5VLfile_close",
    "H5VLgroup_create",
    "H5VLgroup_open",
    "H5VLgroup_get",
    "H5VLgroup_specific",
    "H5VLgroup_optional",
    "H5VLgroup_close",
    "H5VLlink_create",
    "H5VLlink_copy",
    "H5VLlink_move",
    "H5VLlink_get",
    "H5VLlink_specific",
    "H5VLlink_optional",
    "H5VLobject_open",
    "H5VLobject_copy",
    "H5VLobject_get",
    "H5VLobject_specific",
    "H5VLobject_optional",
    "H5VLintrospect_get_conn_cls",
    "H5VLintrospect_get_cap_flags",
    "H5VLintrospect_opt_query",
    "H5VLrequest_wait",
    "H5VLrequest_notify",
    "H5VLrequest_cancel",
    "H5VLrequest_specific",
    "H5VLrequest_optional",
    "H5VLrequest_free",
    "H5VLblob_put",
    "H5VLblob_get",
    "H5VLblob_specific",
    "H5VLblob_optional",
    "H5VLtoken_cmp",
    "H5VLtoken_to_str",
    "H5VLtoken_from_str",
    "H5VLoptional",
];

/// The HDF5 globals h5prov reads (their addresses are resolved like functions).
pub const GLOBALS: &[&str] = &[
    "H5E_ERR_CLS_g",
    "H5E_VOL_g",
    "H5E_CANTOPERATE_g",
    "H5VL_PASSTHRU_g",
    // The predefined native types: immutable, so what a transfer's memory type is can be
    // known from its id alone (see `connector/src/ffi/query.rs`, `mem_type_sig`).
    "H5T_NATIVE_SCHAR_g",
    "H5T_NATIVE_UCHAR_g",
    "H5T_NATIVE_SHORT_g",
    "H5T_NATIVE_USHORT_g",
    "H5T_NATIVE_INT_g",
    "H5T_NATIVE_UINT_g",
    "H5T_NATIVE_LONG_g",
    "H5T_NATIVE_ULONG_g",
    "H5T_NATIVE_LLONG_g",
    "H5T_NATIVE_ULLONG_g",
    "H5T_NATIVE_FLOAT_g",
    "H5T_NATIVE_DOUBLE_g",
    "H5T_NATIVE_LDOUBLE_g",
    "H5T_NATIVE_B8_g",
    "H5T_NATIVE_B16_g",
    "H5T_NATIVE_B32_g",
    "H5T_NATIVE_B64_g",
    "H5T_NATIVE_HSIZE_g",
    "H5T_NATIVE_HSSIZE_g",
    "H5T_NATIVE_HBOOL_g",
    "H5T_NATIVE_INT8_g",
    "H5T_NATIVE_UINT8_g",
    "H5T_NATIVE_INT16_g",
    "H5T_NATIVE_UINT16_g",
    "H5T_NATIVE_INT32_g",
    "H5T_NATIVE_UINT32_g",
    "H5T_NATIVE_INT64_g",
    "H5T_NATIVE_UINT64_g",
];

/// Types (and the constants of enums of these types) generated for every line.
const TYPES: &str = "H5VL.*|H5PL.*|H5O_token_t|H5O_info2_t|H5E_.*|H5I_.*|H5S_.*|H5D_.*|H5F_.*|H5FD_.*|H5T_class_t|H5ES_.*";

/// Macro constants generated for every line.
const VARS: &str = "H5VL_.*|H5S_.*|H5I_.*|H5E_DEFAULT|H5P_DEFAULT|H5O_MAX_TOKEN_SIZE";

/// Structs whose layout the C probe checks: (struct, fields checked by offset).
pub const LAYOUT: &[(&str, &[&str])] = &[
    (
        "H5VL_class_t",
        &[
            "version",
            "value",
            "name",
            "conn_version",
            "cap_flags",
            "initialize",
            "terminate",
            "info_cls",
            "wrap_cls",
            "attr_cls",
            "dataset_cls",
            "datatype_cls",
            "file_cls",
            "group_cls",
            "link_cls",
            "object_cls",
            "introspect_cls",
            "request_cls",
            "blob_cls",
            "token_cls",
            "optional",
        ],
    ),
    (
        "H5VL_info_class_t",
        &["size", "copy", "cmp", "free", "to_str", "from_str"],
    ),
    (
        "H5VL_wrap_class_t",
        &[
            "get_object",
            "get_wrap_ctx",
            "wrap_object",
            "unwrap_object",
            "free_wrap_ctx",
        ],
    ),
    (
        "H5VL_attr_class_t",
        &[
            "create", "open", "read", "write", "get", "specific", "optional", "close",
        ],
    ),
    (
        "H5VL_dataset_class_t",
        &[
            "create", "open", "read", "write", "get", "specific", "optional", "close",
        ],
    ),
    (
        "H5VL_datatype_class_t",
        &["commit", "open", "get", "specific", "optional", "close"],
    ),
    (
        "H5VL_file_class_t",
        &["create", "open", "get", "specific", "optional", "close"],
    ),
    (
        "H5VL_group_class_t",
        &["create", "open", "get", "specific", "optional", "close"],
    ),
    (
        "H5VL_link_class_t",
        &["create", "copy", "move_", "get", "specific", "optional"],
    ),
    (
        "H5VL_object_class_t",
        &["open", "copy", "get", "specific", "optional"],
    ),
    (
        "H5VL_introspect_class_t",
        &["get_conn_cls", "get_cap_flags", "opt_query"],
    ),
    (
        "H5VL_request_class_t",
        &["wait", "notify", "cancel", "specific", "optional", "free"],
    ),
    ("H5VL_blob_class_t", &["put", "get", "specific", "optional"]),
    ("H5VL_token_class_t", &["cmp", "to_str", "from_str"]),
    ("H5VL_loc_params_t", &["obj_type", "type_", "loc_data"]),
    ("H5VL_optional_args_t", &["op_type", "args"]),
    ("H5VL_attr_get_args_t", &["op_type", "args"]),
    ("H5VL_attr_specific_args_t", &["op_type", "args"]),
    ("H5VL_dataset_get_args_t", &["op_type", "args"]),
    ("H5VL_dataset_specific_args_t", &["op_type", "args"]),
    ("H5VL_datatype_get_args_t", &["op_type", "args"]),
    ("H5VL_datatype_specific_args_t", &["op_type", "args"]),
    ("H5VL_file_get_args_t", &["op_type", "args"]),
    ("H5VL_file_specific_args_t", &["op_type", "args"]),
    ("H5VL_group_get_args_t", &["op_type", "args"]),
    ("H5VL_group_specific_args_t", &["op_type", "args"]),
    ("H5VL_link_create_args_t", &["op_type", "args"]),
    ("H5VL_link_get_args_t", &["op_type", "args"]),
    ("H5VL_link_specific_args_t", &["op_type", "args"]),
    ("H5VL_object_get_args_t", &["op_type", "args"]),
    ("H5VL_object_specific_args_t", &["op_type", "args"]),
    ("H5VL_request_specific_args_t", &["op_type", "args"]),
    ("H5VL_blob_specific_args_t", &["op_type", "args"]),
    (
        "H5VL_native_dataset_chunk_read_t",
        &["offset", "filters", "buf"],
    ),
    (
        "H5VL_native_dataset_chunk_write_t",
        &["offset", "filters", "size", "buf"],
    ),
    ("H5O_token_t", &["__data"]),
    ("H5O_info2_t", &["fileno", "token", "type_", "rc"]),
];

/// The enums whose constants name the sub-operations of `get`/`specific` callbacks.
pub const SUBOP_ENUMS: &[&str] = &[
    "H5VL_attr_get_t",
    "H5VL_attr_specific_t",
    "H5VL_dataset_get_t",
    "H5VL_dataset_specific_t",
    "H5VL_datatype_get_t",
    "H5VL_datatype_specific_t",
    "H5VL_file_get_t",
    "H5VL_file_specific_t",
    "H5VL_group_get_t",
    "H5VL_group_specific_t",
    "H5VL_link_create_t",
    "H5VL_link_get_t",
    "H5VL_link_specific_t",
    "H5VL_object_get_t",
    "H5VL_object_specific_t",
    "H5VL_request_specific_t",
    "H5VL_blob_specific_t",
];

/// The macro prefixes that name the native connector's `optional` operations, with the
/// name of the generated table.
pub const SUBOP_MACROS: &[(&str, &str)] = &[
    ("H5VL_NATIVE_ATTR_", "NATIVE_ATTR"),
    ("H5VL_NATIVE_DATASET_", "NATIVE_DATASET"),
    ("H5VL_NATIVE_FILE_", "NATIVE_FILE"),
    ("H5VL_NATIVE_GROUP_", "NATIVE_GROUP"),
    ("H5VL_NATIVE_OBJECT_", "NATIVE_OBJECT"),
];

/// `subops` module: for each sub-operation enum or macro family, `(value, name)` pairs, the
/// name being the constant's name without the family's common prefix, in lower case
/// (`H5VL_ATTR_GET_ACPL` → `acpl`).
fn subops(p: &Parsed) -> Result<TokenStream, String> {
    let mut groups: BTreeMap<String, Vec<(String, u64)>> = BTreeMap::new();
    for item in &p.body {
        let syn::Item::Const(c) = item else { continue };
        let syn::Type::Path(tp) = &*c.ty else {
            continue;
        };
        let ty = tp.path.segments.last().map(|s| s.ident.to_string());
        let syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(v),
            ..
        }) = &*c.expr
        else {
            continue;
        };
        let value: u64 = v.base10_parse().map_err(|e| format!("{}: {e}", c.ident))?;
        let name = c.ident.to_string();
        let group = match ty {
            Some(t) if SUBOP_ENUMS.contains(&t.as_str()) => t,
            _ => match SUBOP_MACROS.iter().find(|(pre, _)| name.starts_with(pre)) {
                Some((_, g)) => g.to_string(),
                None => continue,
            },
        };
        groups.entry(group).or_default().push((name, value));
    }
    let mut consts = Vec::new();
    for (group, mut members) in groups {
        members.sort_by_key(|m| m.1);
        // The longest common prefix ending in '_'.
        let first = &members[0].0;
        let mut cut = first.len();
        for (m, _) in &members {
            cut = cut.min(
                first
                    .bytes()
                    .zip(m.bytes())
                    .take_while(|(a, b)| a == b)
                    .count(),
            );
        }
        let cut = first[..cut].rfind('_').map_or(0, |i| i + 1);
        let pairs = members.iter().map(|(n, v)| {
            let short = n[cut..].to_ascii_lowercase();
            let v = *v as u32;
            quote!((#v, #short),)
        });
        let g = format_ident!("{group}");
        let doc = format!("Sub-operations named by the `{group}` constants.");
        consts.push(quote!(#[doc = #doc] pub const #g: &[(u32, &str)] = &[#(#pairs)*];));
    }
    Ok(quote! {
        /// Sub-operation names from this line's constants (see `h5prov-abigen`).
        pub mod subops { #(#consts)* }
    })
}

/// The generated files, by file name.
pub type Files = BTreeMap<String, String>;

/// `major.minor.release` read from `H5public.h` in `include`.
pub fn header_version(include: &Path) -> Result<(u32, u32, u32), String> {
    let path = include.join("H5public.h");
    let text = std::fs::read_to_string(&path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let get = |key: &str| -> Result<u32, String> {
        text.lines()
            .find_map(|l| {
                let mut w = l.split_whitespace();
                (w.next() == Some("#define") && w.next() == Some(key))
                    .then(|| w.next().and_then(|v| v.parse().ok()))
                    .flatten()
            })
            .ok_or_else(|| format!("{}: no numeric #define {key}", path.display()))
    };
    Ok((
        get("H5_VERS_MAJOR")?,
        get("H5_VERS_MINOR")?,
        get("H5_VERS_RELEASE")?,
    ))
}

/// Runs bindgen over one line's headers.
fn bindgen_line(line: &Line) -> Result<syn::File, String> {
    let include = line.include.display().to_string();
    let wrapper = concat!(env!("CARGO_MANIFEST_DIR"), "/wrapper.h");
    let mut b = bindgen::Builder::default()
        .header(wrapper)
        .clang_arg(format!("-I{include}"))
        .allowlist_type(TYPES)
        .allowlist_var(VARS)
        .allowlist_var(GLOBALS.join("|"))
        // The plugin's own entry points are defined by h5prov.
        .blocklist_function("H5PLget_plugin_type|H5PLget_plugin_info")
        // C may pass enum values a Rust enum cannot hold.
        .default_enum_style(bindgen::EnumVariation::Consts)
        .prepend_enum_name(false)
        .derive_default(true)
        .derive_debug(false)
        .layout_tests(true)
        .generate_comments(false)
        .formatter(bindgen::Formatter::None);
    for f in FUNCTIONS {
        b = b.allowlist_function(f);
    }
    let text = b
        .generate()
        .map_err(|e| format!("bindgen over {include}: {e}"))?
        .to_string();
    syn::parse_file(&text).map_err(|e| format!("parsing bindgen's output for {include}: {e}"))
}

/// A function or global declared in a line's headers.
#[derive(Clone)]
struct Sym {
    name: String,
    /// The pointer type the table holds.
    ty: TokenStream,
    /// For non-variadic functions: argument names and types, and the return type.
    call: Option<(Vec<(Ident, TokenStream)>, TokenStream)>,
}

/// What one line declares.
struct Parsed {
    /// Named items (types, constants) with their tokens.
    named: BTreeMap<String, TokenStream>,
    /// Every non-extern item, in bindgen's order (module body).
    body: Vec<syn::Item>,
    syms: BTreeMap<String, Sym>,
}

fn item_name(item: &syn::Item) -> Option<String> {
    match item {
        syn::Item::Struct(s) => Some(s.ident.to_string()),
        syn::Item::Union(u) => Some(u.ident.to_string()),
        syn::Item::Type(t) => Some(t.ident.to_string()),
        syn::Item::Enum(e) => Some(e.ident.to_string()),
        syn::Item::Const(c) if c.ident != "_" => Some(c.ident.to_string()),
        _ => None,
    }
}

fn parse_line(file: syn::File) -> Parsed {
    let mut named = BTreeMap::new();
    let mut body = Vec::new();
    let mut syms = BTreeMap::new();
    for item in file.items {
        if let syn::Item::ForeignMod(m) = &item {
            for fi in &m.items {
                match fi {
                    syn::ForeignItem::Fn(f) => {
                        let name = f.sig.ident.to_string();
                        let inputs = &f.sig.inputs;
                        let output = &f.sig.output;
                        let ty = if f.sig.variadic.is_some() {
                            quote!(unsafe extern "C" fn(#inputs ...) #output)
                        } else {
                            quote!(unsafe extern "C" fn(#inputs) #output)
                        };
                        let call = f.sig.variadic.is_none().then(|| {
                            let args = inputs
                                .iter()
                                .filter_map(|a| match a {
                                    syn::FnArg::Typed(t) => match &*t.pat {
                                        syn::Pat::Ident(i) => {
                                            let ty = &t.ty;
                                            Some((i.ident.clone(), quote!(#ty)))
                                        }
                                        _ => None,
                                    },
                                    syn::FnArg::Receiver(_) => None,
                                })
                                .collect();
                            let ret = match output {
                                syn::ReturnType::Default => quote!(()),
                                syn::ReturnType::Type(_, t) => quote!(#t),
                            };
                            (args, ret)
                        });
                        syms.insert(name.clone(), Sym { name, ty, call });
                    }
                    syn::ForeignItem::Static(s) => {
                        let name = s.ident.to_string();
                        let t = &s.ty;
                        syms.insert(
                            name.clone(),
                            Sym {
                                name,
                                ty: quote!(*const #t),
                                call: None,
                            },
                        );
                    }
                    _ => {}
                }
            }
            continue;
        }
        if let Some(n) = item_name(&item) {
            named.insert(n, quote!(#item));
        }
        body.push(item);
    }
    Parsed { named, body, syms }
}

/// Every identifier in a token stream.
fn idents(ts: &TokenStream, out: &mut BTreeSet<String>) {
    for tt in ts.clone() {
        match tt {
            TokenTree::Ident(i) => {
                out.insert(i.to_string());
            }
            TokenTree::Group(g) => idents(&g.stream(), out),
            _ => {}
        }
    }
}

/// Type aliases of a primitive type (`hbool_t = bool`, `herr_t = c_int`): the same type
/// under another name, in every line that has it.
fn primitive_aliases(p: &Parsed) -> BTreeMap<String, TokenStream> {
    const PRIMS: &[&str] = &[
        "bool",
        "u8",
        "u16",
        "u32",
        "u64",
        "i8",
        "i16",
        "i32",
        "i64",
        "usize",
        "isize",
        "f32",
        "f64",
        "c_char",
        "c_schar",
        "c_uchar",
        "c_short",
        "c_ushort",
        "c_int",
        "c_uint",
        "c_long",
        "c_ulong",
        "c_longlong",
        "c_ulonglong",
        "c_float",
        "c_double",
    ];
    p.body
        .iter()
        .filter_map(|item| match item {
            syn::Item::Type(t) => match &*t.ty {
                syn::Type::Path(tp)
                    if tp.qself.is_none()
                        && tp
                            .path
                            .segments
                            .last()
                            .is_some_and(|s| PRIMS.contains(&s.ident.to_string().as_str())) =>
                {
                    let last = &tp.path.segments.last().expect("non-empty").ident;
                    Some((t.ident.to_string(), quote!(#last)))
                }
                _ => None,
            },
            _ => None,
        })
        .collect()
}

/// `ts` with every primitive alias replaced by its primitive and paths to primitives by the
/// primitive's name, so `hbool_t` (1.14) and `bool` (2.x) compare equal.
fn normalized(ts: &TokenStream, aliases: &BTreeMap<String, TokenStream>) -> String {
    fn walk(ts: &TokenStream, aliases: &BTreeMap<String, TokenStream>, out: &mut String) {
        for tt in ts.clone() {
            match tt {
                TokenTree::Ident(i) => {
                    let s = i.to_string();
                    match aliases.get(&s) {
                        Some(t) => out.push_str(&t.to_string()),
                        None => out.push_str(&s),
                    }
                    out.push(' ');
                }
                TokenTree::Group(g) => {
                    out.push_str(&format!("{:?}(", g.delimiter()));
                    walk(&g.stream(), aliases, out);
                    out.push_str(") ");
                }
                other => {
                    out.push_str(&other.to_string());
                    out.push(' ');
                }
            }
        }
    }
    let mut out = String::new();
    walk(ts, aliases, &mut out);
    // `::std::os::raw::c_int` and `c_int` name the same type.
    out.replace(": : std : : os : : raw : : ", "")
        .replace(": : core : : ffi : : ", "")
}

/// Names whose definitions are identical in every line and mention nothing that differs.
fn common_names(lines: &[Parsed]) -> (BTreeSet<String>, BTreeSet<String>) {
    let all: BTreeSet<&String> = lines.iter().flat_map(|p| p.named.keys()).collect();
    let mut differing: BTreeSet<String> = BTreeSet::new();
    let mut candidates: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let aliases: Vec<_> = lines.iter().map(primitive_aliases).collect();
    for name in all {
        // A primitive alias is common even where a line spells it out (1.14's `hbool_t`).
        if aliases[0].contains_key(name) {
            candidates.insert(name.clone(), BTreeSet::new());
            continue;
        }
        let defs: Vec<Option<String>> = lines
            .iter()
            .zip(&aliases)
            .map(|(p, a)| p.named.get(name).map(|t| normalized(t, a)))
            .collect();
        if defs.iter().all(|d| d.is_some() && *d == defs[0]) {
            let mut ids = BTreeSet::new();
            idents(&lines[0].named[name], &mut ids);
            ids.remove(name);
            candidates.insert(name.clone(), ids);
        } else {
            differing.insert(name.clone());
        }
    }
    loop {
        let newly: Vec<String> = candidates
            .iter()
            .filter(|(_, ids)| ids.iter().any(|i| differing.contains(i)))
            .map(|(n, _)| n.clone())
            .collect();
        if newly.is_empty() {
            break;
        }
        for n in newly {
            candidates.remove(&n);
            differing.insert(n);
        }
    }
    (candidates.into_keys().collect(), differing)
}

/// Is this symbol the same in every line, over common types only?
fn common_sym(name: &str, lines: &[Parsed], differing: &BTreeSet<String>) -> bool {
    let defs: Vec<Option<String>> = lines
        .iter()
        .map(|p| {
            let a = primitive_aliases(p);
            p.syms.get(name).map(|s| normalized(&s.ty, &a))
        })
        .collect();
    if !defs.iter().all(|d| d.is_some() && *d == defs[0]) {
        return false;
    }
    let mut ids = BTreeSet::new();
    idents(&lines[0].syms[name].ty, &mut ids);
    !ids.iter().any(|i| differing.contains(i))
}

/// The table struct, its loader and (for `free_fns`) one free function per non-variadic
/// function calling through `table_fn()`.
fn table(
    struct_name: &str,
    doc: &str,
    syms: &[&Sym],
    free_fns: Option<TokenStream>,
) -> TokenStream {
    let sname = format_ident!("{struct_name}");
    let fields = syms.iter().map(|s| {
        let n = format_ident!("{}", s.name);
        let t = &s.ty;
        let d = format!("`{}`", s.name);
        quote!(#[doc = #d] pub #n: #t,)
    });
    let loads = syms.iter().map(|s| {
        let n = format_ident!("{}", s.name);
        let t = &s.ty;
        let lit = proc_macro2::Literal::c_string(
            &std::ffi::CString::new(s.name.as_str()).expect("symbol names have no NUL"),
        );
        let name = &s.name;
        quote! {
            #n: {
                let p = sym(#lit);
                if p.is_null() {
                    return Err(#name);
                }
                // SAFETY: `p` is the address of the symbol of this name in the HDF5 library
                // whose headers declared it with exactly this type.
                unsafe { ::core::mem::transmute::<*mut ::core::ffi::c_void, #t>(p) }
            },
        }
    });
    let frees = free_fns.map(|table_fn| {
        let fs = syms.iter().filter_map(|s| {
            let (args, ret) = s.call.as_ref()?;
            let n = format_ident!("{}", s.name);
            let names: Vec<&Ident> = args.iter().map(|(i, _)| i).collect();
            let types: Vec<&TokenStream> = args.iter().map(|(_, t)| t).collect();
            let d = format!("Calls `{}` in the HDF5 library h5prov is bound to.\n\n# Safety\nAs the C function; h5prov must be bound (panics otherwise).", s.name);
            Some(quote! {
                #[doc = #d]
                #[inline]
                pub unsafe fn #n(#(#names: #types),*) -> #ret {
                    // SAFETY: forwarded to the caller.
                    unsafe { (#table_fn.#n)(#(#names),*) }
                }
            })
        });
        quote!(#(#fs)*)
    });
    quote! {
        #[doc = #doc]
        pub struct #sname { #(#fields)* }

        // SAFETY: the table holds function pointers into, and addresses of globals of, a
        // library that stays loaded for the life of the process; it is never mutated.
        unsafe impl Send for #sname {}
        // SAFETY: as above.
        unsafe impl Sync for #sname {}

        impl #sname {
            /// Resolves every symbol with `sym` (null: missing). Fails with the first missing
            /// symbol's name.
            ///
            /// # Safety
            /// `sym` must return addresses from one HDF5 library of this line.
            pub unsafe fn load(
                sym: &mut dyn FnMut(&::core::ffi::CStr) -> *mut ::core::ffi::c_void,
            ) -> Result<Self, &'static str> {
                Ok(Self { #(#loads)* })
            }
        }
        #frees
    }
}

fn header(what: &str, versions: &str) -> String {
    format!(
        "// @generated by h5prov-abigen ({what}) from the headers of HDF5 {versions}.\n\
         // Do not edit: change bindings/abigen and run `cargo run -p h5prov-abigen`.\n"
    )
}

fn unparse(ts: TokenStream) -> Result<String, String> {
    let file: syn::File = syn::parse2(ts).map_err(|e| format!("generated code: {e}"))?;
    Ok(prettyplease::unparse(&file))
}

/// Generates every file of `bindings/src/abi/` for `lines` (the first is the reference the
/// common items are re-exported from).
pub fn generate(lines: &[Line]) -> Result<Files, String> {
    let mut parsed = Vec::new();
    let mut versions = Vec::new();
    for line in lines {
        let v = header_version(&line.include)?;
        versions.push(format!("{}.{}.{}", v.0, v.1, v.2));
        parsed.push(parse_line(bindgen_line(line)?));
    }
    let all_versions = versions.join(", ");
    let (common, differing) = common_names(&parsed);
    let sym_names: BTreeSet<&String> = parsed.iter().flat_map(|p| p.syms.keys()).collect();
    let common_syms: Vec<&Sym> = sym_names
        .iter()
        .filter(|n| common_sym(n, &parsed, &differing))
        .map(|n| &parsed[0].syms[*n])
        .collect();
    let common_sym_names: BTreeSet<&str> = common_syms.iter().map(|s| s.name.as_str()).collect();

    let mut files = Files::new();
    for ((line, p), version) in lines.iter().zip(&parsed).zip(&versions) {
        let body = &p.body;
        let layout = LAYOUT
            .iter()
            .filter(|(ty, _)| p.named.contains_key(*ty))
            .flat_map(|(ty, fields)| {
                let t = format_ident!("{ty}");
                let size = format!("sizeof({ty})");
                std::iter::once(quote!((#size, ::core::mem::size_of::<#t>()),)).chain(
                    fields.iter().map(move |f| {
                        let fi = Ident::new(f, Span::call_site());
                        let label = format!("{ty}.{f}");
                        quote!((#label, ::core::mem::offset_of!(#t, #fi)),)
                    }),
                )
            });
        let own: Vec<&Sym> = p
            .syms
            .values()
            .filter(|s| !common_sym_names.contains(s.name.as_str()))
            .collect();
        let line_doc = format!(
            "The functions and globals of HDF5 {version}'s line that are not the same in every \
             supported line."
        );
        let line_syms = table("LineSyms", &line_doc, &own, None);
        let subops = subops(p)?;
        let ts = quote! {
            #subops

            #(#body)*

            /// (item, size or field offset as Rust sees it), for the C layout probe.
            pub fn rust_layout() -> ::std::vec::Vec<(&'static str, usize)> {
                ::std::vec![#(#layout)*]
            }

            #line_syms
        };
        files.insert(
            format!("{}.rs", line.module),
            header(&format!("the {} line", line.module), version) + &unparse(ts)?,
        );
    }

    let reference = format_ident!("{}", lines[0].module);
    let names = common.iter().map(|n| format_ident!("{n}"));
    files.insert(
        "common.rs".into(),
        header("items identical in every line", &all_versions)
            + &unparse(quote!(pub use super::#reference::{#(#names),*};))?,
    );

    let api = table(
        "Api",
        "Every HDF5 function and global h5prov uses that is the same in every supported line, \
         resolved at run time from the HDF5 library that loaded h5prov.",
        &common_syms,
        Some(quote!(super::api())),
    );
    files.insert(
        "api.rs".into(),
        header("the run-time symbol table", &all_versions)
            + &unparse(quote! {
                #[allow(unused_imports)]
                use super::common::*;
                #api
            })?,
    );

    // For people: what differs.
    let mut md = format!(
        "# What differs between the HDF5 lines h5prov supports\n\n\
         Generated by `h5prov-abigen` from the headers of HDF5 {all_versions}; do not edit.\n\n\
         The connector compiles against `common` (items identical in every line). The items \
         below differ, or exist in one line only; the connector takes them from the line it \
         detected at run time.\n\n| item | {} |\n|---|{}\n",
        lines
            .iter()
            .map(|l| l.module.as_str())
            .collect::<Vec<_>>()
            .join(" | "),
        "---|".repeat(lines.len())
    );
    let short = |t: Option<&TokenStream>| -> String {
        match t {
            None => "absent".into(),
            Some(t) => {
                let s = t.to_string().replace('|', "\\|").replace('\n', " ");
                if s.chars().count() > 120 {
                    format!("`{}…`", s.chars().take(117).collect::<String>())
                } else {
                    format!("`{s}`")
                }
            }
        }
    };
    for n in &differing {
        let cells: Vec<String> = parsed.iter().map(|p| short(p.named.get(n))).collect();
        let _ = writeln!(md, "| `{n}` | {} |", cells.join(" | "));
    }
    for n in sym_names {
        if !common_sym_names.contains(n.as_str()) {
            let cells: Vec<String> = parsed
                .iter()
                .map(|p| short(p.syms.get(n).map(|s| &s.ty)))
                .collect();
            let _ = writeln!(md, "| `{n}` (symbol) | {} |", cells.join(" | "));
        }
    }
    files.insert("DIFFERENCES.md".into(), md);
    Ok(files)
}

/// The C probe for one line: prints `item value` for every [`LAYOUT`] entry that exists in
/// `present`.
pub fn layout_probe_c(present: &[(&str, usize)]) -> String {
    let mut c = String::from(
        "#include \"hdf5.h\"\n#include \"H5VLconnector.h\"\n#include \"H5VLnative.h\"\n\
         #include <stddef.h>\n#include <stdio.h>\nint main(void) {\n",
    );
    for (item, _) in present {
        let expr = match item.strip_prefix("sizeof(") {
            Some(rest) => format!("sizeof({}", rest),
            None => {
                let (ty, f) = item.split_once('.').expect("item is type.field");
                format!("offsetof({ty}, {})", f.strip_suffix('_').unwrap_or(f))
            }
        };
        let _ = writeln!(
            c,
            "    printf(\"%s %zu\\n\", \"{item}\", (size_t)({expr}));"
        );
    }
    c.push_str("    return 0;\n}\n");
    c
}

/// The lines h5prov supports, with include directories from `H5PROV_HDF5_1_14_INCLUDE` and
/// `H5PROV_HDF5_2_INCLUDE`, else `<repo>/.deps/hdf5/include` and
/// `<repo>/.deps/hdf5-2/include`.
pub fn default_lines(repo: &Path) -> Vec<Line> {
    let dir = |var: &str, default: &str| {
        std::env::var_os(var)
            .map(PathBuf::from)
            .unwrap_or_else(|| repo.join(default))
    };
    vec![
        Line {
            module: "v1_14".into(),
            include: dir("H5PROV_HDF5_1_14_INCLUDE", ".deps/hdf5/include"),
        },
        Line {
            module: "v2".into(),
            include: dir("H5PROV_HDF5_2_INCLUDE", ".deps/hdf5-2/include"),
        },
    ]
}

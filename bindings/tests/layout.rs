//! The generated VOL structs must have exactly the layout gcc computes from the installed
//! headers. A mis-declared field (wrong type, missing, reordered) shows up here.

use h5prov_bindings::layout;

#[test]
fn vol_structs_match_the_c_compiler() {
    let bad = layout::mismatches();
    assert!(
        bad.is_empty(),
        "VOL ABI layout differs from C (item, rust, c): {bad:#?}"
    );
}

#[test]
fn probe_covers_the_class_struct() {
    let items: Vec<_> = layout::rust_layout().into_iter().map(|(n, _)| n).collect();
    for f in [
        "sizeof(H5VL_class_t)",
        "H5VL_class_t.cap_flags",
        "H5VL_class_t.optional",
    ] {
        assert!(items.contains(&f), "{f} is not probed");
    }
}

#[test]
fn cap_flags_are_64_bit_and_reads_are_multi_dataset() {
    // HDF5 1.14 (VOL version 3): uint64_t cap flags. hdf5-metno-sys declares c_uint.
    let c = h5prov_bindings::H5VL_class_t::default();
    assert_eq!(std::mem::size_of_val(&c.cap_flags), 8);
    assert_eq!(h5prov_bindings::H5VL_VERSION, 3);
}

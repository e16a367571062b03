//! The storage and transfer fields of issue 17 (`tests/c/dataset_fields.c` documents the
//! program): per dataset its chunks, file datatype, filters, fill and allocation time and
//! DAPL chunk cache; per transfer the memory datatype, conversion, file bytes, and the file
//! selection's blocks and bounding box. In CSV and binary traces, and the traced program
//! writes the same file as the native one.

use h5prov_format::{ObjectSummary, TraceRecord};
use h5prov_tests::*;
use std::path::Path;

fn h5dump(dir: &Path) -> String {
    let out = std::process::Command::new(tool("h5dump"))
        .arg("f.h5")
        .current_dir(dir)
        .env("LD_LIBRARY_PATH", hdf5_dir().join("lib"))
        .env_remove("HDF5_VOL_CONNECTOR")
        .output()
        .expect("run h5dump");
    assert!(out.status.success(), "{}", describe_output("h5dump", &out));
    String::from_utf8(out.stdout).unwrap()
}

/// `(path, chunk, ftype, filters, fill_time, alloc_time, cache, file_bytes_read,
/// file_bytes_written)` of each dataset row, in file order.
type Row<'a> = (
    &'a str,
    &'a str,
    &'a str,
    &'a str,
    &'a str,
    &'a str,
    &'a str,
    u64,
    u64,
);

fn dataset_rows(objs: &[ObjectSummary]) -> Vec<Row<'_>> {
    objs.iter()
        .filter(|o| o.kind == "dataset")
        .map(|o| {
            (
                o.path.as_str(),
                o.chunk.as_str(),
                o.ftype.as_str(),
                o.filters.as_str(),
                o.fill_time.as_str(),
                o.alloc_time.as_str(),
                o.cache.as_str(),
                o.file_bytes_read,
                o.file_bytes_written,
            )
        })
        .collect()
}

/// `(op, path, bytes, mem_type, conv, file_bytes, blocks, bbox)` of each transfer.
type Xfer<'a> = (&'a str, &'a str, u64, &'a str, u8, u64, u64, &'a str);

fn transfers(recs: &[TraceRecord]) -> Vec<Xfer<'_>> {
    recs.iter()
        .filter(|r| r.op.ends_with(".read") || r.op.ends_with(".write"))
        .map(|r| {
            (
                r.op.as_str(),
                r.path.as_str(),
                r.bytes,
                r.mem_type.as_str(),
                r.conv,
                r.file_bytes,
                r.blocks,
                r.bbox.as_str(),
            )
        })
        .collect()
}

fn check(traces: &Path) {
    let objs = read_objects(traces);
    assert_eq!(
        dataset_rows(&objs),
        [
            (
                "/chunked",
                "64x64",
                "float64le",
                "shuffle+deflate(6)",
                "ifset",
                "incr",
                "12421:16777216:1",
                1600,
                1600
            ),
            (
                "/contig_be",
                "",
                "int32be",
                "",
                "ifset",
                "late",
                "",
                80,
                400
            ),
            ("/compact", "", "uint8", "", "ifset", "early", "", 0, 3),
            // Reopened with the default DAPL: the file's chunk cache applies.
            (
                "/chunked",
                "64x64",
                "float64le",
                "shuffle+deflate(6)",
                "ifset",
                "incr",
                "",
                0,
                0
            ),
        ],
        "{objs:#?}"
    );
    // Attribute rows carry no storage description.
    assert!(objs
        .iter()
        .filter(|o| o.kind == "attr")
        .all(|o| o.chunk.is_empty() && o.ftype.is_empty() && o.filters.is_empty()));
    let mut recs = read_records(traces);
    recs.sort_by_key(|r| r.seq);
    assert_eq!(
        transfers(&recs),
        [
            // float32 from memory into float64: converted; 2 blocks of 10x10.
            (
                "dataset.write",
                "/chunked",
                800,
                "float32le",
                1,
                1600,
                2,
                "0:109x0:9"
            ),
            (
                "dataset.read",
                "/chunked",
                1600,
                "float64le",
                0,
                1600,
                2,
                "0:109x0:9"
            ),
            // The attribute's file type is known at create (int64be), and still at the
            // read after its reopen: the reopen found the node its create's close parked.
            ("attr.write", "/chunked/a", 8, "int64le", 1, 8, 1, ""),
            ("attr.read", "/chunked/a", 8, "int64le", 1, 8, 1, ""),
            // Native int into big-endian int32: converted (byte order); H5S_ALL.
            (
                "dataset.write",
                "/contig_be",
                400,
                "int32le",
                1,
                400,
                1,
                "0:99"
            ),
            // Two adjacent blocks: HDF5 counts the blocks as selected, not merged.
            (
                "dataset.read",
                "/contig_be",
                80,
                "int32le",
                1,
                80,
                2,
                "10:29"
            ),
            // 3 points.
            ("dataset.write", "/compact", 3, "uint8", 0, 3, 3, "2:9"),
        ],
    );
}

#[test]
fn storage_and_transfer_fields_in_csv_and_bin_and_the_same_file() {
    let exe = c_program("dataset_fields");
    let native = scratch("fields-native");
    Run::native(&exe, &["f.h5"], &native).ok();
    let want = h5dump(&native);
    let mut traced = None;
    for format in ["csv", "bin"] {
        let dir = scratch(&format!("fields-{format}"));
        let traces = dir.join("t");
        Run::with_h5prov(
            &exe,
            &["f.h5"],
            &dir,
            &traces,
            &format!("level=dataset;format={format}"),
        )
        .ok();
        // The binary encoding is written zstd-compressed.
        let ext = format!(
            ".trace.{}",
            if format == "bin" { "bin.zst" } else { format }
        );
        assert_eq!(files_with_suffix(&traces, &ext).len(), 1, "{format}");
        check(&traces);
        assert_eq!(h5dump(&dir), want, "{format}: the traced program's file");
        traced = Some(dir);
    }
    // Opened by another program (h5dump through h5prov): a contiguous dataset with its
    // storage allocated is described without its creation property list (its fill and
    // allocation times unknown); the others as at create.
    let dir = traced.unwrap();
    let traces = dir.join("t-h5dump");
    Run::with_h5prov(&tool("h5dump"), &["f.h5"], &dir, &traces, "level=summary").ok();
    let objs = read_objects(&traces);
    let mut rows: Vec<_> = objs
        .iter()
        // h5dump's datasets opened by path (it also wraps ids of its own: no path).
        .filter(|o| o.kind == "dataset" && !o.path.is_empty())
        .map(|o| {
            (
                o.path.as_str(),
                o.layout.as_str(),
                o.chunk.as_str(),
                o.fill_time.as_str(),
                o.alloc_time.as_str(),
            )
        })
        .collect();
    rows.sort();
    assert_eq!(
        rows,
        [
            ("/chunked", "chunked", "64x64", "ifset", "incr"),
            ("/compact", "compact", "", "ifset", "early"),
            ("/contig_be", "contiguous", "", "", ""),
        ],
        "{objs:#?}"
    );
}

#[test]
fn summary_level_records_the_storage_but_no_per_transfer_fields() {
    let exe = c_program("dataset_fields");
    let dir = scratch("fields-summary");
    let traces = dir.join("t");
    Run::with_h5prov(&exe, &["f.h5"], &dir, &traces, "level=summary").ok();
    let objs = read_objects(&traces);
    let rows = dataset_rows(&objs);
    assert_eq!(rows.len(), 4, "{objs:#?}");
    assert_eq!(
        rows[0],
        (
            "/chunked",
            "64x64",
            "float64le",
            "shuffle+deflate(6)",
            "ifset",
            "incr",
            "12421:16777216:1",
            1600,
            1600
        )
    );
}

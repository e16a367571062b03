//! Encodes a metadata-heavy-like stream of trace records (for instruction counts under
//! callgrind): `cargo run --release -p h5prov-format --example encode_mix -- bin|csv N`.
use h5prov_format::{BinEncoder, TraceRecordRef};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let fmt = args.get(1).map_or("bin", |s| s.as_str()).to_string();
    let n: u64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(100_000);
    let ops = [
        ("group.create", "group"),
        ("attr.create", "attr"),
        ("attr.write", "attr"),
        ("attr.close", "attr"),
        ("attr.open", "attr"),
        ("attr.read", "attr"),
        ("attr.close", "attr"),
        ("group.close", "group"),
        ("dataset.open", "dataset"),
        ("dataset.write", "dataset"),
        ("dataset.read", "dataset"),
        ("dataset.close", "dataset"),
        ("link.specific:exists", "file"),
        ("group.open", "group"),
    ];
    let file = "/work/main/target/bench-work/runs/metadata-heavy-np1/data/meta-r0.h5";
    let paths: Vec<String> = (0..64).map(|i| format!("/g{i}/a")).collect();
    let mut out = Vec::with_capacity(1 << 20);
    let mut enc = BinEncoder::default();
    let mut t = 1_795_585_196_154_335_897u64;
    let mut total = 0;
    for i in 0..n {
        let (op, kind) = ops[(i % ops.len() as u64) as usize];
        let io = op.ends_with("read") || op.ends_with("write");
        t += 12_000 + (i * 7919) % 5000;
        let r = TraceRecordRef {
            seq: i,
            start_ns: t,
            total_ns: 3000 + (i * 31) % 9000,
            under_ns: 2500 + (i * 17) % 8000,
            rank: -1,
            pid: 23678,
            tid: 23678,
            op,
            kind,
            file,
            path: &paths[(i / 14 % 64) as usize],
            status: 0,
            is_async: 0,
            bytes: if io { 4 } else { 0 },
            type_size: if io { 4 } else { 0 },
            ndims: 0,
            npoints: u64::from(io),
            sel: if io { "all" } else { "" },
            xfer: "",
            xfer_actual: "",
            batch: 1,
            detail: "",
            mem_type: if io { "int32le" } else { "" },
            conv: 0,
            file_bytes: if io { 4 } else { 0 },
            blocks: u64::from(io),
            bbox: "",
            anon: "",
            req: 0,
            req_done: 0,
            exec_ns: 0,
        };
        let r = std::hint::black_box(r);
        match fmt.as_str() {
            "csv" => r.write_csv(&mut out),
            "none" => {}
            _ => r.write_bin(&mut out, &mut enc),
        }
        if out.len() > (1 << 20) - 4096 {
            total += out.len();
            out.clear();
            enc.new_block();
        }
    }
    total += out.len();
    println!("{fmt}: {n} records, {} bytes/record", total as u64 / n);
}

//! Human units shared by detection (insight texts) and the renderers: durations, byte
//! counts, power-of-two size labels, bandwidths and percentages. Below every stage that
//! prints a number, so that detection never imports the renderer.

/// A duration for people: `850 ns`, `12.3 µs`, `4.56 ms`, `1.23 s`.
pub fn fmt_ns(ns: u64) -> String {
    let x = ns as f64;
    if ns < 1_000 {
        format!("{ns} ns")
    } else if ns < 1_000_000 {
        format!("{:.1} µs", x / 1e3)
    } else if ns < 1_000_000_000 {
        format!("{:.2} ms", x / 1e6)
    } else {
        format!("{:.2} s", x / 1e9)
    }
}

/// A byte count for people: `512 B`, `4.0 KiB`, `1.50 MiB`, `2.00 GiB`.
pub fn fmt_bytes(b: u64) -> String {
    let x = b as f64;
    if b < 1024 {
        format!("{b} B")
    } else if b < 1 << 20 {
        format!("{:.1} KiB", x / 1024.0)
    } else if b < 1 << 30 {
        format!("{:.2} MiB", x / (1u64 << 20) as f64)
    } else {
        format!("{:.2} GiB", x / (1u64 << 30) as f64)
    }
}

/// A power-of-two size label: `1`, `512`, `4K`, `1M`, `2G`.
pub fn fmt_bytes_short(b: u64) -> String {
    if b >= 1 << 30 && b % (1 << 30) == 0 {
        format!("{}G", b >> 30)
    } else if b >= 1 << 20 && b % (1 << 20) == 0 {
        format!("{}M", b >> 20)
    } else if b >= 1 << 10 && b % (1 << 10) == 0 {
        format!("{}K", b >> 10)
    } else {
        b.to_string()
    }
}

/// A bandwidth for people (`12.3 MiB/s`).
pub fn fmt_bw(bps: f64) -> String {
    if bps <= 0.0 {
        "-".into()
    } else {
        format!("{}/s", fmt_bytes(bps.round() as u64))
    }
}

/// A fraction as a percentage with one decimal (`12.3%`).
pub fn pct(x: f64) -> String {
    format!("{:.1}%", x * 100.0)
}

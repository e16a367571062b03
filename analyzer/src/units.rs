//! Human units: durations, byte counts, power-of-two size labels, bandwidths and
//! percentages, for detection (insight texts), the renderers and `h5prov top`. Below every
//! stage that prints a number, so that detection never imports the renderer. The report's
//! forms have two decimals past KiB and `µs`; the `_compact` forms (`h5prov top`'s narrow
//! columns) one decimal and ASCII `us`. Bytes scale up to PiB in both.

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

/// Binary byte units, each 1024 times the one before.
const BYTE_UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];

/// `b` bytes in the largest binary unit it reaches (PiB at most): `(value, unit index)`.
fn scale_bytes(b: f64) -> (f64, usize) {
    let (mut v, mut u) = (b, 0);
    while v >= 1024.0 && u + 1 < BYTE_UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    (v, u)
}

/// A byte count for people: `512 B`, `4.0 KiB`, `1.50 MiB`, `2.00 GiB`, `5.00 TiB`.
pub fn fmt_bytes(b: u64) -> String {
    let (v, u) = scale_bytes(b as f64);
    match u {
        0 => format!("{b} B"),
        1 => format!("{v:.1} KiB"),
        _ => format!("{v:.2} {}", BYTE_UNITS[u]),
    }
}

/// A byte count in a narrow column (`h5prov top`): one decimal, `1.5 MiB`, `5.0 TiB`.
pub fn fmt_bytes_compact(b: f64) -> String {
    let (v, u) = scale_bytes(b);
    if u == 0 {
        format!("{v:.0} B")
    } else {
        format!("{v:.1} {}", BYTE_UNITS[u])
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

/// A duration in a narrow column (`h5prov top`): `850 ns`, `12.3 us`, `4.6 ms`, `1.23 s`
/// (ASCII `us`: any terminal shows it).
pub fn fmt_ns_compact(ns: u64) -> String {
    let n = ns as f64;
    if ns < 1_000 {
        format!("{ns} ns")
    } else if ns < 1_000_000 {
        format!("{:.1} us", n / 1e3)
    } else if ns < 1_000_000_000 {
        format!("{:.1} ms", n / 1e6)
    } else {
        format!("{:.2} s", n / 1e9)
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

/// A fraction as a whole percentage (`h5prov top`'s busy column: `25%`).
pub fn pct_whole(x: f64) -> String {
    format!("{:.0}%", x * 100.0)
}

/// A number with its unit, as a finding's evidence carries it (`--json`) and its text
/// prints it ([`Quantity::text`]). Serialised as a one-key object naming the unit, so that a
/// reader of the JSON gets the raw value and knows its unit: `{"ns": 4561000}`,
/// `{"bytes": 4096}`, `{"count": 12}`, `{"fraction": 0.123}`, `{"ratio": 10.0}`,
/// `{"bytes_per_s": 1.2e6}`, `{"name": "/grid/x"}`.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Quantity {
    /// A duration in nanoseconds (printed by [`fmt_ns`]).
    Ns(u64),
    /// A byte count (printed by [`fmt_bytes`]).
    Bytes(u64),
    /// A number of things: calls, objects, processes (printed as is).
    Count(u64),
    /// A part of a whole, 0 to 1 (printed by [`pct`] as a percentage).
    Fraction(f64),
    /// How many times one quantity is another (p99/p50, bytes moved per byte asked for);
    /// printed with one decimal (`10.0`; a finding's text may round it further).
    Ratio(f64),
    /// A bandwidth in bytes per second (printed by [`fmt_bw`]).
    BytesPerS(f64),
    /// What the finding is about: a file, a dataset or object path, an operation, a process.
    Name(String),
}

impl Quantity {
    /// The quantity as a finding's text prints it, through this module's formatters.
    pub fn text(&self) -> String {
        match self {
            Quantity::Ns(v) => fmt_ns(*v),
            Quantity::Bytes(v) => fmt_bytes(*v),
            Quantity::Count(v) => v.to_string(),
            Quantity::Fraction(v) => pct(*v),
            Quantity::Ratio(v) => format!("{v:.1}"),
            Quantity::BytesPerS(v) => fmt_bw(*v),
            Quantity::Name(s) => s.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(fmt_ns(0), "0 ns");
        assert_eq!(fmt_ns(999), "999 ns");
        assert_eq!(fmt_ns(12_345), "12.3 µs");
        assert_eq!(fmt_ns(4_561_000), "4.56 ms");
        assert_eq!(fmt_ns(1_234_000_000), "1.23 s");
        assert_eq!(fmt_ns(7_200_000_000_000), "7200.00 s");
    }

    #[test]
    fn durations_compact() {
        assert_eq!(fmt_ns_compact(999), "999 ns");
        assert_eq!(fmt_ns_compact(12_345), "12.3 us");
        assert_eq!(fmt_ns_compact(4_561_000), "4.6 ms");
        assert_eq!(fmt_ns_compact(1_234_000_000), "1.23 s");
    }

    #[test]
    fn bytes() {
        assert_eq!(fmt_bytes(0), "0 B");
        assert_eq!(fmt_bytes(1023), "1023 B");
        assert_eq!(fmt_bytes(4096), "4.0 KiB");
        assert_eq!(fmt_bytes((1 << 20) - 1), "1024.0 KiB");
        assert_eq!(fmt_bytes(3 << 19), "1.50 MiB");
        assert_eq!(fmt_bytes(2 << 30), "2.00 GiB");
        assert_eq!(fmt_bytes((1 << 40) - 1), "1024.00 GiB");
    }

    #[test]
    fn bytes_past_gib_use_larger_units() {
        assert_eq!(fmt_bytes(5 << 40), "5.00 TiB");
        assert_eq!(fmt_bytes(3 << 50), "3.00 PiB");
        assert_eq!(fmt_bytes(2048 << 50), "2048.00 PiB");
        assert_eq!(fmt_bytes(u64::MAX), "16384.00 PiB");
    }

    #[test]
    fn bytes_compact() {
        assert_eq!(fmt_bytes_compact(0.0), "0 B");
        assert_eq!(fmt_bytes_compact(1000.0), "1000 B");
        assert_eq!(fmt_bytes_compact(1.5 * 1024.0 * 1024.0), "1.5 MiB");
        assert_eq!(fmt_bytes_compact((5u64 << 40) as f64), "5.0 TiB");
    }

    #[test]
    fn size_labels() {
        assert_eq!(fmt_bytes_short(1), "1");
        assert_eq!(fmt_bytes_short(512), "512");
        assert_eq!(fmt_bytes_short(1536), "1536");
        assert_eq!(fmt_bytes_short(4096), "4K");
        assert_eq!(fmt_bytes_short(1 << 20), "1M");
        assert_eq!(fmt_bytes_short(2 << 30), "2G");
    }

    #[test]
    fn bandwidths() {
        assert_eq!(fmt_bw(0.0), "-");
        assert_eq!(fmt_bw(-1.0), "-");
        assert_eq!(fmt_bw(12.3 * 1024.0 * 1024.0), "12.30 MiB/s");
        assert_eq!(fmt_bw((5u64 << 40) as f64), "5.00 TiB/s");
    }

    #[test]
    fn percentages() {
        assert_eq!(pct(0.0), "0.0%");
        assert_eq!(pct(0.1234), "12.3%");
        assert_eq!(pct(1.0), "100.0%");
        assert_eq!(pct_whole(0.25), "25%");
        assert_eq!(pct_whole(0.999), "100%");
    }

    #[test]
    fn quantities_print_through_the_formatters_and_serialise_with_their_unit() {
        let cases = [
            (Quantity::Ns(4_561_000), "4.56 ms", r#"{"ns":4561000}"#),
            (Quantity::Bytes(3 << 19), "1.50 MiB", r#"{"bytes":1572864}"#),
            (Quantity::Count(1024), "1024", r#"{"count":1024}"#),
            (
                Quantity::Fraction(0.1234),
                "12.3%",
                r#"{"fraction":0.1234}"#,
            ),
            (Quantity::Ratio(10.04), "10.0", r#"{"ratio":10.04}"#),
            (
                Quantity::BytesPerS(12.3 * 1024.0 * 1024.0),
                "12.30 MiB/s",
                r#"{"bytes_per_s":12897484.8}"#,
            ),
            (
                Quantity::Name("/grid/x".into()),
                "/grid/x",
                r#"{"name":"/grid/x"}"#,
            ),
        ];
        for (q, text, json) in cases {
            assert_eq!(q.text(), text, "{q:?}");
            assert_eq!(serde_json::to_string(&q).unwrap(), json, "{q:?}");
        }
    }
}

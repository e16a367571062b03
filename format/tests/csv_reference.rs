//! The generated CSV encoders, byte for byte, against the `csv` crate's writer (RFC 4180
//! quoting only where needed, `\n` line ends), and the JSONL encoders against
//! `serde_json::to_writer` (and `\n`), on awkward values: separators, quotes, backslashes,
//! CR, LF and other control characters, empty text, text of every length around the
//! encoders' word sizes, and the integers at every digit-count boundary, including each
//! type's extremes.

use h5prov_format::{
    ObjectSummary, ObjectSummaryRef, TraceRecord, TraceRecordRef, OBJECT_COLUMNS, TRACE_COLUMNS,
};
use serde::Serialize;

/// What the `csv` crate writes for `rows`.
fn csv_reference<T: Serialize>(rows: &[T]) -> Vec<u8> {
    let mut w = csv::WriterBuilder::new()
        .has_headers(false)
        .from_writer(Vec::new());
    for r in rows {
        w.serialize(r).unwrap();
    }
    w.into_inner().unwrap()
}

/// What `serde_json` writes for `rows`, one per line.
fn jsonl_reference<T: Serialize>(rows: &[T]) -> Vec<u8> {
    let mut out = Vec::new();
    for r in rows {
        serde_json::to_writer(&mut out, r).unwrap();
        out.push(b'\n');
    }
    out
}

/// A deterministic xorshift stream.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn pick<T: Copy>(&mut self, from: &[T]) -> T {
        from[self.next() as usize % from.len()]
    }

    /// A number at or next to a digit-count boundary, or an extreme, or anything.
    fn number(&mut self) -> u64 {
        let r = self.next();
        let p = 10u64.saturating_pow((r >> 8) as u32 % 21);
        match r % 8 {
            0 => 0,
            1 => self.pick(&[9, 10, 99, 100, 255, 256]),
            2 => p,
            3 => p - 1,
            4 => p.saturating_add(1),
            5 => u64::MAX - (r >> 60),
            6 => r >> (r >> 58),
            _ => r,
        }
    }

    /// Text of a length around the encoder's word sizes, plain or with awkward bytes.
    fn text(&mut self) -> String {
        const AWKWARD: &[&str] = &[
            ",", "\"", "\n", "\r", "\r\n", " ", "\t", "\0", "+", "-", "é", "😀", "\\", "\u{8}",
            "\u{c}", "\u{1f}", "\u{7f}", "!", "#", "[", "]",
        ];
        const PLAIN: &[&str] = &["a", "/", "Z", "0", ".", "_", "-", "~"];
        let r = self.next();
        let len = match r % 5 {
            0 => 0,
            1 => (r >> 8) % 9,
            2 => (r >> 8) % 40,
            3 => 1 + (r >> 8) % 300,
            _ => self.pick(&[1, 3, 4, 7, 8, 9, 15, 16, 17, 24, 31, 32, 33, 64]),
        };
        let awkward = (r >> 20) % 3 == 0;
        (0..len)
            .map(|_| {
                if awkward && self.next() % 4 == 0 {
                    self.pick(AWKWARD)
                } else {
                    self.pick(PLAIN)
                }
            })
            .collect()
    }
}

/// Text every encoder path must get right, whatever the generator draws.
const FIXED_TEXTS: &[&str] = &[
    "",
    ",",
    "\"",
    "\r",
    "\n",
    "\r\n",
    "\"\"",
    "a,b",
    "say \"hi\"",
    "line\nbreak",
    "plain",
    "dataset.write",
    "/tmp/csvcg1300/d/meta-r0.h5",
    "é ü 😀",
    "tab\tnul\0",
    "back\\slash",
    "\u{1}\u{8}\u{c}\u{1b}\u{1f} \u{7f}",
    "\\\"\\\"",
    "/path/with \\ and \"q\" in the middle of a text past 32 bytes",
    "exactly8",
    "sixteen-bytes-16",
    "thirty-two-bytes-of-plain-text-!",
];

fn traces() -> Vec<TraceRecord> {
    let mut rows: Vec<TraceRecord> = FIXED_TEXTS
        .iter()
        .zip([0, 9, 10, u64::MAX, 99_999_999, 100_000_000].iter().cycle())
        .map(|(t, &n)| TraceRecord {
            seq: n,
            start_ns: u64::MAX - n,
            total_ns: n / 3,
            rank: i64::MIN,
            pid: u32::MAX,
            tid: n,
            op: t.to_string(),
            kind: t.to_string(),
            file: t.repeat(3),
            path: t.to_string(),
            status: i32::MIN,
            is_async: u8::MAX,
            sel: t.to_string(),
            detail: t.repeat(20),
            ..TraceRecord::default()
        })
        .collect();
    let mut g = Rng(0x9e37_79b9_7f4a_7c15);
    rows.extend((0..3000).map(|_| random(&mut g, TRACE_COLUMNS, TraceRecordRef::BIN_TYPES)));
    rows
}

fn summaries() -> Vec<ObjectSummary> {
    let mut g = Rng(0x2545_f491_4f6c_dd1d);
    (0..2000)
        .map(|_| random(&mut g, OBJECT_COLUMNS, ObjectSummaryRef::BIN_TYPES))
        .collect()
}

/// A record with a random value in every column, built from the table's own column list
/// and types (so a new column is covered without touching this test). Numbers are
/// reduced to the column's width through serde: out-of-range values are re-drawn.
fn random<T: serde::de::DeserializeOwned>(g: &mut Rng, columns: &[&str], types: &[u8]) -> T {
    loop {
        let mut m = serde_json::Map::new();
        for (c, t) in columns.iter().zip(types) {
            let v = match *t {
                h5prov_format::BIN_TEXT => serde_json::Value::from(g.text()),
                h5prov_format::BIN_SIGNED => serde_json::Value::from(narrow(g) as i64),
                _ => serde_json::Value::from(narrow(g)),
            };
            m.insert(c.to_string(), v);
        }
        if let Ok(r) = serde_json::from_value(serde_json::Value::Object(m)) {
            return r;
        }
    }
}

/// A number that fits the narrowest column type (u8) often enough for records to build:
/// every digit-count boundary, through `g.number()`, masked to a random width.
fn narrow(g: &mut Rng) -> u64 {
    let n = g.number();
    match g.next() % 4 {
        0 => n & 0x7f,
        1 => n & 0x7fff_ffff,
        _ => n,
    }
}

/// Rows whose text JSON need not escape (those characters replaced), for the JSONL
/// encoders' fast path: most random rows hold some text that takes the slow one.
fn json_plain<T: Serialize + serde::de::DeserializeOwned>(rows: &[T]) -> Vec<T> {
    let plain = |v: serde_json::Value| match v {
        serde_json::Value::String(s) => s
            .chars()
            .map(|c| {
                if c < ' ' || c == '"' || c == '\\' {
                    '~'
                } else {
                    c
                }
            })
            .collect::<String>()
            .into(),
        v => v,
    };
    rows.iter()
        .map(|r| {
            let serde_json::Value::Object(m) = serde_json::to_value(r).unwrap() else {
                unreachable!("a record serializes as an object")
            };
            let m = m.into_iter().map(|(k, v)| (k, plain(v))).collect();
            serde_json::from_value(serde_json::Value::Object(m)).unwrap()
        })
        .collect()
}

/// The encoder appends exactly the reference's bytes `want`: one record at a time into
/// one buffer, after whatever the buffer held.
fn check<T>(rows: &[T], want: Vec<u8>, write: impl Fn(&T, &mut Vec<u8>)) {
    let mut got = b"prefix".to_vec();
    for r in rows {
        write(r, &mut got);
    }
    assert_eq!(&got[..6], b"prefix");
    let got = &got[6..];
    if got != want {
        // The first differing line, readably.
        let (g, w) = (got.split(|&b| b == b'\n'), want.split(|&b| b == b'\n'));
        for (i, (g, w)) in g.zip(w).enumerate() {
            assert_eq!(
                String::from_utf8_lossy(g),
                String::from_utf8_lossy(w),
                "line {i}"
            );
        }
        assert_eq!(got, want);
    }
}

#[test]
fn trace_csv_is_the_csv_crates() {
    let rows = traces();
    check(&rows, csv_reference(&rows), |r, out| {
        r.borrowed().write_csv(out)
    });
}

#[test]
fn object_csv_is_the_csv_crates() {
    let rows = summaries();
    check(&rows, csv_reference(&rows), |r, out| {
        r.borrowed().write_csv(out)
    });
}

#[test]
fn trace_jsonl_is_serde_jsons() {
    for rows in [traces(), json_plain(&traces())] {
        check(&rows, jsonl_reference(&rows), |r, out| {
            r.borrowed().write_jsonl(out)
        });
    }
}

#[test]
fn object_jsonl_is_serde_jsons() {
    for rows in [summaries(), json_plain(&summaries())] {
        check(&rows, jsonl_reference(&rows), |r, out| {
            r.borrowed().write_jsonl(out)
        });
    }
}

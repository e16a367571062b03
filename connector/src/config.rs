//! h5prov's options, validated from the `key=value` items of the info string.
//!
//! | key | values | default |
//! | --- | --- | --- |
//! | `path` | trace directory | `./h5prov-traces` |
//! | `level` | `off`, `summary`, `file`, `group`, `dataset`, `element`; or the original H5Prov `1` (print), `2` (file), `3` (both) at dataset level | `dataset` |
//! | `format` | `bin` (binary blocks, each a zstd frame: `*.trace.bin.zst`; `h5prov cat` prints CSV), `csv`, `jsonl` | `bin` |
//! | `name` | file-name template: `%r` rank, `%p` pid, `%h` host, `%t` start time, `%%` | `h5prov-r%r-p%p` |
//! | `dirs` | spread files over N subdirectories `dNNNN` (1..=65536) | none |
//! | `mode` | octal permission of created files | `600` |
//! | `buffer` | trace buffer bytes per process (`64K`, `1M`, ...; 4K..=256M) | `1M` |
//! | `max_size` | cap on each process's trace file (`512M`, `2G`, ...; at least 64K); later records are dropped and counted, per-object summaries stay complete | none |
//! | `stream` | also stream events while the job runs to a collector (`h5prov collect`): `HOST:PORT`, `[V6]:PORT` or `unix:PATH` (docs/STREAMING.md) | none |
//! | `stream_level` | `event` (one message per record) or `interval` (per-op summaries every `stream_interval`) | `event` |
//! | `stream_format` | `bin` (trace records in the binary trace encoding, many to a frame) or `jsonl` (one JSON line per event, for LDMS relays); `stream_level=interval` always sends JSON lines | `bin` |
//! | `stream_interval` | interval of the summaries and of the hand-off to the sender thread, in ms (10..=3600000) | `1000` |
//! | `stream_tls_ca` | a PEM CA (or the collector's self-signed certificate): the stream to a TCP collector runs in TLS, the collector verified before anything is sent (docs/STREAMING.md) | none |
//! | `stream_token_file` | a file (mode 600) holding the collector's shared-secret token: the collector must prove it holds it before anything is sent (docs/STREAMING.md) | none |
//!
//! Any other key is an error that names it: h5prov never silently traces nothing while
//! the user believes it is on.

use crate::info::ParseError;
use std::path::PathBuf;

/// What gets recorded. Ordered: each level includes the ones before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// Nothing is written.
    Off,
    /// Only per-object summaries (and the metadata record).
    Summary,
    /// File operations.
    File,
    /// Plus groups and links.
    Group,
    /// Plus datasets, attributes, datatypes and objects (default).
    Dataset,
    /// Plus per-call selection detail.
    Element,
}

impl Level {
    /// The level's name as written in metadata.
    pub fn name(self) -> &'static str {
        match self {
            Level::Off => "off",
            Level::Summary => "summary",
            Level::File => "file",
            Level::Group => "group",
            Level::Dataset => "dataset",
            Level::Element => "element",
        }
    }
}

/// Trace file encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// CSV with one header row.
    Csv,
    /// One JSON object per line.
    Jsonl,
    /// Length-prefixed binary records after a header naming the columns, each written
    /// block compressed as one zstd frame (`*.bin.zst`).
    Bin,
}

/// Where `stream=` sends its messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StreamTarget {
    /// A TCP address, `HOST:PORT` (resolved when the sender connects).
    Tcp(String),
    /// A Unix stream socket.
    Unix(PathBuf),
}

/// How `stream_level=event` messages go on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamFormat {
    /// Frames of trace records in the binary trace encoding (`h5prov_format::stream`).
    Bin,
    /// One JSON line per event.
    Jsonl,
}

/// What `stream=` sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamLevel {
    /// One message per trace record.
    Event,
    /// Per-interval, per-operation summaries.
    Interval,
}

impl Format {
    /// File extension.
    pub fn ext(self) -> &'static str {
        match self {
            Format::Csv => "csv",
            Format::Jsonl => "jsonl",
            Format::Bin => "bin",
        }
    }

    /// The suffix of the trace and objects files after `.trace`/`.objects`: the
    /// extension, and `.zst` for the compressed binary encoding.
    pub fn file_ext(self) -> &'static str {
        match self {
            Format::Bin => "bin.zst",
            f => f.ext(),
        }
    }

    /// Whether written blocks are compressed (one zstd frame each).
    pub fn compressed(self) -> bool {
        self == Format::Bin
    }
}

/// Validated configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// Trace directory.
    pub path: PathBuf,
    /// Record level.
    pub level: Level,
    /// Write trace files.
    pub to_file: bool,
    /// Print records on stderr (original H5Prov level 1 and 3).
    pub to_stderr: bool,
    /// Encoding.
    pub format: Format,
    /// File-name template.
    pub name: String,
    /// Subdirectory fan-out.
    pub dirs: Option<u32>,
    /// File mode.
    pub mode: u32,
    /// Buffer bytes per process.
    pub buffer: usize,
    /// Cap on the bytes of each process's trace file.
    pub max_size: Option<u64>,
    /// Stream messages to a collector while the job runs.
    pub stream: Option<StreamTarget>,
    /// Events or interval summaries.
    pub stream_level: StreamLevel,
    /// Wire form of events.
    pub stream_format: StreamFormat,
    /// Summary and hand-off interval, ms.
    pub stream_interval_ms: u64,
    /// The shared-secret token's file (read when streaming starts).
    pub stream_token_file: Option<PathBuf>,
    /// The PEM CA the collector's TLS certificate must chain to (read when streaming
    /// starts); TLS on a TCP stream when given.
    pub stream_tls_ca: Option<PathBuf>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            path: PathBuf::from("./h5prov-traces"),
            level: Level::Dataset,
            to_file: true,
            to_stderr: false,
            format: Format::Bin,
            name: "h5prov-r%r-p%p".to_string(),
            dirs: None,
            mode: 0o600,
            buffer: 1 << 20,
            max_size: None,
            stream: None,
            stream_level: StreamLevel::Event,
            stream_format: StreamFormat::Bin,
            stream_interval_ms: 1000,
            stream_token_file: None,
            stream_tls_ca: None,
        }
    }
}

fn bad(key: &str, value: &str, why: &str) -> ParseError {
    ParseError {
        key: key.to_string(),
        message: format!("invalid value '{value}': {why}"),
    }
}

fn parse_size(v: &str) -> Option<usize> {
    let v = v.trim();
    let (num, mult) = match v.as_bytes().last()? {
        b'K' | b'k' => (&v[..v.len() - 1], 1usize << 10),
        b'M' | b'm' => (&v[..v.len() - 1], 1 << 20),
        b'G' | b'g' => (&v[..v.len() - 1], 1 << 30),
        _ => (v, 1),
    };
    num.parse::<usize>().ok()?.checked_mul(mult)
}

/// `HOST:PORT`, `[V6]:PORT` or `unix:PATH`.
fn parse_stream(k: &str, v: &str) -> Result<StreamTarget, ParseError> {
    if let Some(path) = v.strip_prefix("unix:") {
        if path.is_empty() || path.len() > 107 {
            return Err(bad(k, v, "unix: and a socket path of at most 107 bytes"));
        }
        return Ok(StreamTarget::Unix(PathBuf::from(path)));
    }
    let ok = v.rsplit_once(':').is_some_and(|(host, port)| {
        !host.is_empty()
            && !host.contains(['/', ' '])
            && port.parse::<u16>().is_ok_and(|p| p > 0)
            && (!host.contains(':') || (host.starts_with('[') && host.ends_with(']')))
    });
    if !ok {
        return Err(bad(
            k,
            v,
            "expected HOST:PORT (e.g. localhost:9099 or [::1]:9099) or unix:PATH",
        ));
    }
    Ok(StreamTarget::Tcp(v.to_string()))
}

impl Config {
    /// Builds a configuration from `key=value` options; the first bad one is reported.
    pub fn from_options(options: &[(String, String)]) -> Result<Config, ParseError> {
        let mut c = Config::default();
        for (k, v) in options {
            let (k, v) = (k.as_str(), v.as_str());
            match k {
                "path" => {
                    if v.is_empty() {
                        return Err(bad(k, v, "empty directory"));
                    }
                    c.path = PathBuf::from(v);
                }
                "level" => {
                    (c.level, c.to_file, c.to_stderr) =
                        match v {
                            "off" | "0" => (Level::Off, false, false),
                            "summary" => (Level::Summary, true, false),
                            "file" => (Level::File, true, false),
                            "group" => (Level::Group, true, false),
                            "dataset" => (Level::Dataset, true, false),
                            "element" => (Level::Element, true, false),
                            "1" => (Level::Dataset, false, true),
                            "2" => (Level::Dataset, true, false),
                            "3" => (Level::Dataset, true, true),
                            _ => return Err(bad(
                                k,
                                v,
                                "expected off, summary, file, group, dataset, element, 1, 2 or 3",
                            )),
                        }
                }
                "format" => {
                    c.format = match v {
                        "csv" => Format::Csv,
                        "jsonl" | "json" => Format::Jsonl,
                        "bin" => Format::Bin,
                        _ => return Err(bad(k, v, "expected csv, jsonl or bin")),
                    }
                }
                "name" => {
                    if v.is_empty() || v.contains('/') {
                        return Err(bad(k, v, "a file-name template without '/'"));
                    }
                    let mut chars = v.chars();
                    while let Some(ch) = chars.next() {
                        if ch == '%' && !matches!(chars.next(), Some('r' | 'p' | 'h' | 't' | '%')) {
                            return Err(bad(k, v, "only %r, %p, %h, %t and %% are expanded"));
                        }
                    }
                    c.name = v.to_string();
                }
                "dirs" => {
                    let n = v
                        .parse::<u32>()
                        .ok()
                        .filter(|n| (1..=65536).contains(n))
                        .ok_or_else(|| bad(k, v, "a number of subdirectories, 1 to 65536"))?;
                    c.dirs = Some(n);
                }
                "mode" => {
                    let m = u32::from_str_radix(v.trim_start_matches("0o"), 8)
                        .ok()
                        .filter(|m| *m <= 0o777)
                        .ok_or_else(|| bad(k, v, "an octal file mode such as 600 or 640"))?;
                    if m & 0o600 != 0o600 {
                        return Err(bad(k, v, "the owner must be able to read and write (0600)"));
                    }
                    c.mode = m;
                }
                "buffer" => {
                    c.buffer = parse_size(v)
                        .filter(|b| (4096..=256 << 20).contains(b))
                        .ok_or_else(|| bad(k, v, "a size from 4K to 256M, such as 64K or 1M"))?;
                }
                "max_size" => {
                    let m = parse_size(v)
                        .filter(|m| *m >= 64 << 10)
                        .ok_or_else(|| bad(k, v, "a size of at least 64K, such as 512M or 2G"))?;
                    c.max_size = Some(m as u64);
                }
                "stream" => c.stream = Some(parse_stream(k, v)?),
                "stream_level" => {
                    c.stream_level = match v {
                        "event" => StreamLevel::Event,
                        "interval" => StreamLevel::Interval,
                        _ => return Err(bad(k, v, "expected event or interval")),
                    }
                }
                "stream_format" => {
                    c.stream_format = match v {
                        "bin" => StreamFormat::Bin,
                        "jsonl" => StreamFormat::Jsonl,
                        _ => return Err(bad(k, v, "expected bin or jsonl")),
                    }
                }
                "stream_interval" => {
                    c.stream_interval_ms = v
                        .trim_end_matches("ms")
                        .parse::<u64>()
                        .ok()
                        .filter(|n| (10..=3_600_000).contains(n))
                        .ok_or_else(|| bad(k, v, "milliseconds, 10 to 3600000"))?;
                }
                "stream_tls_ca" => {
                    if v.is_empty() {
                        return Err(bad(k, v, "the path of a PEM CA certificate file"));
                    }
                    c.stream_tls_ca = Some(PathBuf::from(v));
                }
                "stream_token_file" => {
                    if v.is_empty() {
                        return Err(bad(k, v, "the path of a token file"));
                    }
                    c.stream_token_file = Some(PathBuf::from(v));
                }
                _ => {
                    return Err(ParseError {
                        key: k.to_string(),
                        message: "unknown option (known: path, level, format, name, dirs, mode, \
                                  buffer, max_size, stream, stream_level, stream_format, stream_interval, \
                                  stream_token_file, stream_tls_ca)"
                            .into(),
                    })
                }
            }
        }
        Ok(c)
    }

    /// Expands the file-name template.
    pub fn expand_name(&self, rank: i64, pid: u32, host: &str, start_secs: u64) -> String {
        let mut out = String::with_capacity(self.name.len() + 16);
        let mut chars = self.name.chars();
        while let Some(ch) = chars.next() {
            if ch != '%' {
                out.push(ch);
                continue;
            }
            match chars.next() {
                Some('r') if rank >= 0 => out.push_str(&rank.to_string()),
                Some('r') => out.push('x'),
                Some('p') => out.push_str(&pid.to_string()),
                Some('h') => out.push_str(host),
                Some('t') => out.push_str(&start_secs.to_string()),
                Some('%') => out.push('%'),
                _ => {}
            }
        }
        out
    }

    /// The directory a process's files go to, with the `dirs=N` fan-out.
    pub fn dir_for(&self, rank: i64, pid: u32) -> PathBuf {
        match self.dirs {
            Some(n) => {
                let k = if rank >= 0 {
                    rank as u64
                } else {
                    u64::from(pid)
                };
                self.path.join(format!("d{:04}", k % u64::from(n)))
            }
            None => self.path.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(s: &[(&str, &str)]) -> Vec<(String, String)> {
        s.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn defaults() {
        let c = Config::from_options(&[]).unwrap();
        assert_eq!(c, Config::default());
        assert_eq!(c.level, Level::Dataset);
        assert_eq!(c.mode, 0o600);
    }

    #[test]
    fn legacy_numeric_levels_keep_their_meaning() {
        let c = Config::from_options(&opts(&[("level", "1")])).unwrap();
        assert!(c.to_stderr && !c.to_file);
        let c = Config::from_options(&opts(&[("level", "2")])).unwrap();
        assert!(!c.to_stderr && c.to_file);
        let c = Config::from_options(&opts(&[("level", "3")])).unwrap();
        assert!(c.to_stderr && c.to_file);
    }

    #[test]
    fn all_options() {
        let c = Config::from_options(&opts(&[
            ("path", "/tmp/x"),
            ("level", "element"),
            ("format", "jsonl"),
            ("name", "t-%h-%r-%p-%t%%"),
            ("dirs", "64"),
            ("mode", "640"),
            ("buffer", "64K"),
            ("max_size", "2G"),
            ("stream", "[::1]:9099"),
            ("stream_level", "interval"),
            ("stream_format", "jsonl"),
            ("stream_interval", "250"),
        ]))
        .unwrap();
        assert_eq!(c.max_size, Some(2 << 30));
        assert_eq!(c.stream, Some(StreamTarget::Tcp("[::1]:9099".into())));
        assert_eq!(
            (c.stream_level, c.stream_format, c.stream_interval_ms),
            (StreamLevel::Interval, StreamFormat::Jsonl, 250)
        );
        let u = Config::from_options(&opts(&[("stream", "unix:/tmp/s")])).unwrap();
        assert_eq!(u.stream, Some(StreamTarget::Unix("/tmp/s".into())));
        assert_eq!(c.level, Level::Element);
        assert_eq!(c.format, Format::Jsonl);
        assert_eq!(c.dirs, Some(64));
        assert_eq!(c.mode, 0o640);
        assert_eq!(c.buffer, 65536);
        assert_eq!(c.expand_name(3, 42, "n1", 7), "t-n1-3-42-7%");
        assert_eq!(c.expand_name(-1, 42, "n1", 7), "t-n1-x-42-7%");
        assert_eq!(c.dir_for(130, 1), PathBuf::from("/tmp/x/d0002"));
    }

    #[test]
    fn bin_format() {
        let c = Config::from_options(&opts(&[("format", "bin")])).unwrap();
        assert_eq!((c.format, c.format.ext()), (Format::Bin, "bin"));
        let e = Config::from_options(&opts(&[("format", "xml")])).unwrap_err();
        assert!(e.to_string().contains("expected csv, jsonl or bin"), "{e}");
    }

    #[test]
    fn bad_values_name_the_key() {
        for (k, v) in [
            ("level", "verbose"),
            ("format", "xml"),
            ("dirs", "0"),
            ("dirs", "many"),
            ("mode", "999"),
            ("mode", "400"),
            ("buffer", "1"),
            ("buffer", "12Q"),
            ("max_size", "1K"),
            ("max_size", "lots"),
            ("name", "a/b"),
            ("name", "%q"),
            ("path", ""),
            ("colour", "blue"),
            ("stream", "localhost"),
            ("stream", "localhost:0"),
            ("stream", "localhost:http"),
            ("stream", ":9099"),
            ("stream", "::1:9099"),
            ("stream", "unix:"),
            ("stream_level", "all"),
            ("stream_format", "json"),
            ("stream_interval", "5"),
        ] {
            let e = Config::from_options(&opts(&[(k, v)])).expect_err(k);
            assert_eq!(e.key, k);
        }
    }
}

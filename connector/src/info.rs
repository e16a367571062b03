//! The connector info string: a pure parser with a lossless round trip.
//!
//! Grammar (what `HDF5_VOL_CONNECTOR="h5prov <info>"` and `H5VLconnector_str_to_info` pass):
//!
//! ```text
//! info    := item (';' item)*
//! item    := 'under_vol=' u32 | 'under_vol_name=' name | 'under_info={' balanced '}' | key '=' value
//! ```
//!
//! `under_info` holds the under connector's own info string, with nested braces
//! (`under_info={under_vol=0;under_info={}}`). Every other `key=value` is an h5prov option
//! ([`crate::config`]); the original H5Prov keys `path`, `level` and `format` are among them.
//! Items are separated by `;` at brace depth zero. Whitespace around items is ignored.

use std::fmt;

/// How the under (next) connector is named.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Under {
    /// `under_vol=<value>`: a registered connector value (0 is native).
    Value(u32),
    /// `under_vol_name=<name>`: a connector name HDF5 can load.
    Name(String),
}

/// A parsed info string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectorInfo {
    /// The under connector.
    pub under: Under,
    /// The under connector's info string (without the braces), possibly empty.
    pub under_info: String,
    /// h5prov's own options, in the order given.
    pub options: Vec<(String, String)>,
    /// The `path=` value exactly as given when it is not UTF-8 (paths are bytes on Linux);
    /// `options` then holds its lossy form, for display only.
    pub path_bytes: Option<Vec<u8>>,
}

/// A malformed info string; `key` names the offending item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// The key (or text) at fault.
    pub key: String,
    /// What is wrong with it.
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "h5prov connector string: '{}': {}",
            self.key, self.message
        )
    }
}

impl std::error::Error for ParseError {}

fn err(key: &str, message: impl Into<String>) -> ParseError {
    ParseError {
        key: key.to_string(),
        message: message.into(),
    }
}

/// The key of an item (`key=...`), or the item itself, for error messages.
fn key_of(item: &str) -> &str {
    item.split_once('=').map_or(item, |(k, _)| k).trim()
}

/// Splits at `;` on brace depth zero. Fails on unbalanced braces.
fn split_items(s: &str) -> Result<Vec<&str>, ParseError> {
    let mut items = Vec::new();
    let mut depth = 0usize;
    let mut start = 0usize;
    for (i, c) in s.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth = depth
                    .checked_sub(1)
                    .ok_or_else(|| err(key_of(&s[start..=i]), "unbalanced '}'"))?;
            }
            ';' if depth == 0 => {
                items.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if depth != 0 {
        return Err(err(key_of(&s[start..]), "unbalanced '{' (missing '}')"));
    }
    items.push(&s[start..]);
    Ok(items)
}

/// [`split_items`] over bytes: `;` on brace depth zero (unbalanced braces are left to
/// [`ConnectorInfo::parse`] to report).
fn split_items_bytes(s: &[u8]) -> Vec<&[u8]> {
    let mut items = Vec::new();
    let mut depth = 0usize;
    let mut start = 0usize;
    for (i, &c) in s.iter().enumerate() {
        match c {
            b'{' => depth += 1,
            b'}' => depth = depth.saturating_sub(1),
            b';' if depth == 0 => {
                items.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    items.push(&s[start..]);
    items
}

impl ConnectorInfo {
    /// Parses an info string. An empty string means "native under connector, no options".
    pub fn parse(s: &str) -> Result<Self, ParseError> {
        let mut under = None;
        let mut under_info = None;
        let mut options = Vec::new();
        for raw in split_items(s.trim())? {
            let item = raw.trim();
            if item.is_empty() {
                continue;
            }
            let (key, value) = item
                .split_once('=')
                .ok_or_else(|| err(item, "expected key=value"))?;
            let key = key.trim();
            let value = value.trim();
            if key.is_empty() {
                return Err(err(item, "empty key"));
            }
            match key {
                "under_vol" => {
                    if under.is_some() {
                        return Err(err(key, "under connector given twice"));
                    }
                    let v = value.parse::<u32>().map_err(|_| {
                        err(
                            key,
                            format!("'{value}' is not a connector value (an unsigned integer)"),
                        )
                    })?;
                    under = Some(Under::Value(v));
                }
                "under_vol_name" => {
                    if under.is_some() {
                        return Err(err(key, "under connector given twice"));
                    }
                    if value.is_empty() || value.contains(['{', '}', ' ']) {
                        return Err(err(key, format!("'{value}' is not a connector name")));
                    }
                    under = Some(Under::Name(value.to_string()));
                }
                "under_info" => {
                    if under_info.is_some() {
                        return Err(err(key, "given twice"));
                    }
                    let inner = value
                        .strip_prefix('{')
                        .and_then(|v| v.strip_suffix('}'))
                        .ok_or_else(|| err(key, "must be enclosed in braces: under_info={...}"))?;
                    under_info = Some(inner.to_string());
                }
                _ => {
                    if value.contains(['{', '}']) {
                        return Err(err(key, "braces are only allowed in under_info"));
                    }
                    if options.iter().any(|(k, _): &(String, String)| k == key) {
                        return Err(err(key, "option given twice"));
                    }
                    options.push((key.to_string(), value.to_string()));
                }
            }
        }
        Ok(ConnectorInfo {
            under: under.unwrap_or(Under::Value(0)),
            under_info: under_info.unwrap_or_default(),
            options,
            path_bytes: None,
        })
    }

    /// Parses an info string as HDF5 hands it over: bytes. A `path=` value that is not
    /// UTF-8 is kept exactly ([`ConnectorInfo::path_bytes`]); any other key or value that is
    /// not UTF-8 is an error naming it.
    pub fn parse_bytes(raw: &[u8]) -> Result<Self, ParseError> {
        if let Ok(text) = std::str::from_utf8(raw) {
            return Self::parse(text);
        }
        let mut text = Vec::with_capacity(raw.len());
        let mut path_bytes = None;
        for (n, item) in split_items_bytes(raw).into_iter().enumerate() {
            if n > 0 {
                text.push(b';');
            }
            if std::str::from_utf8(item).is_ok() {
                text.extend_from_slice(item);
                continue;
            }
            let (key, value) = match item.iter().position(|&b| b == b'=') {
                Some(i) => (item[..i].trim_ascii(), item[i + 1..].trim_ascii()),
                None => (item.trim_ascii(), &[][..]),
            };
            let Ok(key) = std::str::from_utf8(key) else {
                return Err(err(
                    &String::from_utf8_lossy(key),
                    "this key is not valid UTF-8",
                ));
            };
            if key != "path" {
                return Err(err(
                    key,
                    "the value is not valid UTF-8 (only path= may hold arbitrary bytes)",
                ));
            }
            path_bytes = Some(value.to_vec());
            text.extend_from_slice(b"path=");
            text.extend_from_slice(String::from_utf8_lossy(value).as_bytes());
        }
        let mut info = Self::parse(&String::from_utf8_lossy(&text))?;
        info.path_bytes = path_bytes;
        Ok(info)
    }

    /// [`ConnectorInfo::to_info_string`] as bytes, with a non-UTF-8 `path=` exactly as given.
    pub fn to_info_bytes(&self) -> Vec<u8> {
        let text = self.to_info_string();
        let Some(raw) = &self.path_bytes else {
            return text.into_bytes();
        };
        let mut out = Vec::with_capacity(text.len());
        for (n, item) in split_items_bytes(text.as_bytes()).into_iter().enumerate() {
            if n > 0 {
                out.push(b';');
            }
            if item.starts_with(b"path=") {
                out.extend_from_slice(b"path=");
                out.extend_from_slice(raw);
            } else {
                out.extend_from_slice(item);
            }
        }
        out
    }

    /// Renders the canonical string: `under_vol=V;under_info={...}[;key=value]*`.
    pub fn to_info_string(&self) -> String {
        let mut s = match &self.under {
            Under::Value(v) => format!("under_vol={v}"),
            Under::Name(n) => format!("under_vol_name={n}"),
        };
        s.push_str(";under_info={");
        s.push_str(&self.under_info);
        s.push('}');
        for (k, v) in &self.options {
            s.push(';');
            s.push_str(k);
            s.push('=');
            s.push_str(v);
        }
        s
    }

    /// The value of option `key`, if given.
    pub fn option(&self, key: &str) -> Option<&str> {
        self.options
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn non_utf8_path_is_kept_as_bytes_and_other_non_utf8_is_named() {
        let raw = b"under_vol=0;under_info={};path=/tmp/tr\xff\xfe;level=dataset";
        let p = ConnectorInfo::parse_bytes(raw).unwrap();
        assert_eq!(p.path_bytes.as_deref(), Some(&b"/tmp/tr\xff\xfe"[..]));
        assert_eq!(p.option("level"), Some("dataset"));
        assert_eq!(p.to_info_bytes(), raw.to_vec(), "lossless round trip");
        let e =
            ConnectorInfo::parse_bytes(b"under_vol=0;under_info={};level=dat\xffset").unwrap_err();
        assert_eq!(e.key, "level");
        let e =
            ConnectorInfo::parse_bytes(b"under_vol=0;under_info={};le\xffvel=dataset").unwrap_err();
        assert!(e.message.contains("key is not valid UTF-8"), "{e}");
        let e = ConnectorInfo::parse_bytes(b"under_vol=0;under_info={x=\xff}").unwrap_err();
        assert_eq!(e.key, "under_info");
        // UTF-8 input takes the plain path.
        assert_eq!(
            ConnectorInfo::parse_bytes(b"path=/t").unwrap(),
            ConnectorInfo::parse("path=/t").unwrap()
        );
    }

    fn rt(s: &str) {
        let p = ConnectorInfo::parse(s).unwrap();
        assert_eq!(p.to_info_string(), s, "round trip of {s:?}");
        assert_eq!(ConnectorInfo::parse(&p.to_info_string()).unwrap(), p);
    }

    #[test]
    fn minimal() {
        let p = ConnectorInfo::parse("under_vol=0;under_info={}").unwrap();
        assert_eq!(p.under, Under::Value(0));
        assert_eq!(p.under_info, "");
        assert!(p.options.is_empty());
        rt("under_vol=0;under_info={}");
    }

    #[test]
    fn empty_string_is_native_with_no_options() {
        let p = ConnectorInfo::parse("").unwrap();
        assert_eq!(p.under, Under::Value(0));
        assert_eq!(p.to_info_string(), "under_vol=0;under_info={}");
        assert_eq!(ConnectorInfo::parse("  ;; ").unwrap(), p);
    }

    #[test]
    fn nesting() {
        let s = "under_vol=1;under_info={under_vol=0;under_info={}}";
        let p = ConnectorInfo::parse(s).unwrap();
        assert_eq!(p.under, Under::Value(1));
        assert_eq!(p.under_info, "under_vol=0;under_info={}");
        rt(s);
        let deep = "under_vol=416;under_info={under_vol=1;under_info={under_vol=0;under_info={}}};level=file";
        let p = ConnectorInfo::parse(deep).unwrap();
        assert_eq!(
            p.under_info,
            "under_vol=1;under_info={under_vol=0;under_info={}}"
        );
        assert_eq!(p.option("level"), Some("file"));
        rt(deep);
    }

    #[test]
    fn options_and_legacy_keys() {
        let s = "under_vol=0;under_info={};path=/tmp/t;level=2;format=csv";
        let p = ConnectorInfo::parse(s).unwrap();
        assert_eq!(p.option("path"), Some("/tmp/t"));
        assert_eq!(p.option("level"), Some("2"));
        assert_eq!(p.option("format"), Some("csv"));
        rt(s);
    }

    #[test]
    fn under_vol_name() {
        let s = "under_vol_name=pass_through;under_info={under_vol=0;under_info={}}";
        let p = ConnectorInfo::parse(s).unwrap();
        assert_eq!(p.under, Under::Name("pass_through".into()));
        rt(s);
    }

    #[test]
    fn any_length() {
        let long = "x".repeat(100_000);
        let s = format!("under_vol=0;under_info={{}};path=/{long}");
        let p = ConnectorInfo::parse(&s).unwrap();
        assert_eq!(p.option("path").unwrap().len(), 100_001);
        rt(&s);
        // Deep nesting does not recurse.
        let deep = format!(
            "under_vol=0;under_info={}{}",
            "{".repeat(5000),
            "}".repeat(5000)
        );
        assert!(ConnectorInfo::parse(&deep).is_ok());
    }

    #[test]
    fn garbage_names_the_key() {
        for (s, key) in [
            ("under_vol=abc;under_info={}", "under_vol"),
            ("under_vol=0;under_info=nobraces", "under_info"),
            ("under_vol=0;under_info={", "under_info"),
            ("under_vol=0;under_info={}}", "under_info"),
            ("under_vol=0;bogus", "bogus"),
            ("under_vol=0;=3", "=3"),
            ("under_vol=0;under_vol=1", "under_vol"),
            ("under_vol=0;level=1;level=2", "level"),
            ("under_vol=0;path={x}", "path"),
            ("under_vol_name=;under_info={}", "under_vol_name"),
        ] {
            let e = ConnectorInfo::parse(s).expect_err(s);
            assert_eq!(e.key, key, "{s:?} -> {e}");
            assert!(e.to_string().contains(key));
        }
    }

    #[test]
    fn never_panics_on_arbitrary_bytes() {
        // A small deterministic fuzz over a grammar-heavy alphabet.
        let alphabet = [
            'u', 'n', 'd', 'e', 'r', '_', 'v', 'o', 'l', '=', ';', '{', '}', '0', '1', ' ', 'é',
        ];
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for _ in 0..20_000 {
            let mut s = String::new();
            for _ in 0..(x % 24) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                s.push(alphabet[(x % alphabet.len() as u64) as usize]);
            }
            if let Ok(p) = ConnectorInfo::parse(&s) {
                // Whatever parses renders to something that parses to the same value.
                assert_eq!(
                    ConnectorInfo::parse(&p.to_info_string()).unwrap(),
                    p,
                    "{s:?}"
                );
            }
        }
    }
}

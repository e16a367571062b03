//! The machinery behind the declarative record tables of `lib.rs`: [`record_table!`] and
//! the small traits and helpers its expansion uses.
//!
//! One table row per field: `field "column": type = empty, rule;`. `type` is `u64`, `u32`,
//! `u8`, `i64`, `i32` or `str` (text). `empty` is the value an empty CSV field, an absent
//! column or a missing JSONL key reads as. `rule` is one of
//! - `opt`: an optional column;
//! - `req`: the CSV header must have the column (rows may leave it empty);
//! - `nonempty`: `req`, and a row must give a non-empty value;
//! - `min1`: values below 1 read as 1.
//!
//! From the table the macro generates the column names, the owned serde type, the borrowed
//! type (`&'a str` text), its CSV, JSONL and binary encoders, the one parser of the CSV and
//! binary encodings (through [`CsvHeader`] or [`BinDecoder`](crate::BinDecoder) and a
//! [`FieldSource`]; JSONL through a `Cow` twin), and the conversions between the owned and
//! borrowed types. Adding a field is adding a row.

use crate::field;
use serde::de::{Deserializer, Visitor};
use std::borrow::Cow;
use std::fmt;

/// Where [`FieldSource`]-driven parsers read a record's fields from. `col` is the field's
/// position in the table, `name` its column name (for messages); `empty` is what an empty
/// or absent field reads as.
pub trait FieldSource<'a> {
    /// Why a field could not be read.
    type Error;
    /// An unsigned decimal field.
    fn unsigned(&self, col: usize, name: &'static str, empty: u64) -> Result<u64, Self::Error>;
    /// A signed decimal field.
    fn signed(&self, col: usize, name: &'static str, empty: i64) -> Result<i64, Self::Error>;
    /// A text field.
    fn text(&self, col: usize, name: &'static str) -> Result<&'a str, Self::Error>;
    /// A number that does not fit the field's type.
    fn out_of_range(&self, col: usize, name: &'static str) -> Self::Error;
    /// An empty value in a `nonempty` field.
    fn empty_value(&self, col: usize, name: &'static str) -> Self::Error;
}

/// The value type of a table column, as declared in its table row: what columnar writers
/// (the analyzer's Parquet export) build their schema from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ColumnKind {
    /// `u64`.
    U64,
    /// `u32`.
    U32,
    /// `u8` (flags).
    U8,
    /// `i64`.
    I64,
    /// `i32`.
    I32,
    /// `str`: UTF-8 text.
    Text,
}

impl ColumnKind {
    /// The type's name as the table declares it (`u64`, ..., `str`).
    pub fn name(self) -> &'static str {
        match self {
            ColumnKind::U64 => "u64",
            ColumnKind::U32 => "u32",
            ColumnKind::U8 => "u8",
            ColumnKind::I64 => "i64",
            ColumnKind::I32 => "i32",
            ColumnKind::Text => "str",
        }
    }
}

/// Where a record's fields go, one call per column in table order (`col` is the column's
/// position): what columnar encoders implement. The record's
/// `write_fields` drives it.
pub trait FieldSink<'a> {
    /// An unsigned field (`u64`, `u32`, `u8`).
    fn unsigned(&mut self, col: usize, v: u64);
    /// A signed field (`i64`, `i32`).
    fn signed(&mut self, col: usize, v: i64);
    /// A text field.
    fn text(&mut self, col: usize, v: &'a str);
}

/// The position of column `name` in `columns` (a table's `*_COLUMNS`); in a `const`, a
/// name the table does not have fails the build.
pub const fn column_index(columns: &[&str], name: &str) -> usize {
    let mut i = 0;
    while i < columns.len() {
        let (c, n) = (columns[i].as_bytes(), name.as_bytes());
        if c.len() == n.len() {
            let mut j = 0;
            while j < c.len() && c[j] == n[j] {
                j += 1;
            }
            if j == c.len() {
                return i;
            }
        }
        i += 1;
    }
    panic!("no such column")
}

/// A value type of a table field: how it is read from a [`FieldSource`] and written to CSV.
pub trait Column<'a>: Sized + Copy {
    /// The column's declared type.
    const KIND: ColumnKind;
    /// Hands the field to a [`FieldSink`] as column `col`.
    fn put_field<S: FieldSink<'a>>(self, col: usize, s: &mut S);
    /// Reads the field.
    fn read<S: FieldSource<'a>>(
        s: &S,
        col: usize,
        name: &'static str,
        empty: Self,
    ) -> Result<Self, S::Error>;
    /// At most how long the field's CSV text is, with its comma (text: when empty).
    const CSV_ROOM: usize;
    /// At most how long this value's CSV text is, with its comma.
    #[inline(always)]
    fn csv_room(self) -> usize {
        Self::CSV_ROOM
    }
    /// Writes a comma when `comma`, then the field's CSV text, at `at & mask` in `buf`,
    /// which has [`csv_room`](Column::csv_room) and 32 more bytes there (`field::PAD`);
    /// returns where the field ends. It may overwrite bytes past that end (see
    /// `field.rs`).
    fn put_csv(self, buf: &mut [u8], at: usize, mask: usize, comma: bool) -> usize;
    /// At most how long the field's JSON value is (text: when empty, its quotes).
    const JSON_ROOM: usize;
    /// At most how long this value's JSON text is, when it needs no escapes.
    #[inline(always)]
    fn json_room(self) -> usize {
        Self::JSON_ROOM
    }
    /// Writes `key`, then the field's JSON value, at `at.min(lim)` in `buf`, which has the
    /// key, [`json_room`](Column::json_room) and 32 more bytes there; returns where it
    /// ends, like [`put_csv`](Column::put_csv). Text is written unescaped: when it needs
    /// escapes, ORs a nonzero value into `special`, and the record must be written
    /// otherwise.
    fn put_json(
        self,
        buf: &mut [u8],
        at: usize,
        lim: usize,
        key: &[u8],
        special: &mut u64,
    ) -> usize;
    /// The field's type code in a binary file header.
    const BIN: u8;
    /// At most how many bytes the field's binary value takes, less its text's length.
    const BIN_ROOM: usize = crate::bin::BIN_NUM_ROOM;
    /// The length of the field's text (0 for numbers).
    #[inline(always)]
    fn bin_text_len(self) -> usize {
        0
    }
    /// Writes the field's binary value, as column `col`, at `buf[p..]`, which has
    /// [`BIN_ROOM`](Column::BIN_ROOM) and [`bin_text_len`](Column::bin_text_len) bytes
    /// there, and sets bit `col` of `bits`; or, when the value is the column's previous
    /// one, nothing. Returns where it ends. `key` is the text's key, 0 for none (see
    /// [`BinBlock::put_text`](crate::BinBlock::put_text)); numbers ignore it.
    fn put_bin<B: crate::bin::BinBuf + ?Sized>(
        self,
        buf: &mut B,
        p: usize,
        col: usize,
        block: &mut crate::BinBlock,
        key: u64,
        bits: &mut u64,
    ) -> usize;
    /// Whether the value is the empty string (never, for numbers).
    fn is_empty_text(self) -> bool {
        false
    }
}

macro_rules! unsigned_column {
    ($($t:ty: $digits:literal, $span:expr => $kind:expr),*) => {$(
        impl<'a> Column<'a> for $t {
            const KIND: ColumnKind = $kind;
            #[inline(always)]
            fn put_field<S: FieldSink<'a>>(self, col: usize, s: &mut S) {
                s.unsigned(col, u64::from(self));
            }
            #[inline(always)]
            fn read<S: FieldSource<'a>>(s: &S, col: usize, name: &'static str, empty: Self)
                -> Result<Self, S::Error> {
                let v = s.unsigned(col, name, u64::from(empty))?;
                <$t>::try_from(v).map_err(|_| s.out_of_range(col, name))
            }
            const CSV_ROOM: usize = $digits + 1;
            #[inline(always)]
            fn put_csv(self, buf: &mut [u8], at: usize, mask: usize, comma: bool) -> usize {
                field::put_unsigned::<{ $span }>(buf, at, mask, comma, u64::from(self))
            }
            const JSON_ROOM: usize = $digits;
            #[inline(always)]
            fn put_json(self, buf: &mut [u8], at: usize, lim: usize, key: &[u8], _: &mut u64)
                -> usize {
                field::put_json_unsigned::<{ $span }>(buf, at, lim, key, u64::from(self))
            }
            const BIN: u8 = $crate::bin::BIN_UNSIGNED;
            #[inline(always)]
            fn put_bin<B: $crate::bin::BinBuf + ?Sized>(self, buf: &mut B, p: usize, col: usize, enc: &mut $crate::BinBlock, _key: u64, bits: &mut u64)
                -> usize {
                enc.put_num(buf, p, col, u64::from(self), bits)
            }
        }
    )*};
}
// Per type: its most digits, the bytes its writer touches, and its kind.
unsigned_column!(
    u64: 20, field::SPAN_64 => ColumnKind::U64,
    u32: 10, field::SPAN_U32 => ColumnKind::U32,
    u8: 3, field::SPAN_U8 => ColumnKind::U8
);

macro_rules! signed_column {
    ($($t:ty: $digits:literal, $span:expr => $kind:expr),*) => {$(
        impl<'a> Column<'a> for $t {
            const KIND: ColumnKind = $kind;
            #[inline(always)]
            fn put_field<S: FieldSink<'a>>(self, col: usize, s: &mut S) {
                s.signed(col, i64::from(self));
            }
            #[inline(always)]
            fn read<S: FieldSource<'a>>(s: &S, col: usize, name: &'static str, empty: Self)
                -> Result<Self, S::Error> {
                let v = s.signed(col, name, i64::from(empty))?;
                <$t>::try_from(v).map_err(|_| s.out_of_range(col, name))
            }
            const CSV_ROOM: usize = $digits + 1;
            #[inline(always)]
            fn put_csv(self, buf: &mut [u8], at: usize, mask: usize, comma: bool) -> usize {
                field::put_signed::<{ $span }>(buf, at, mask, comma, i64::from(self))
            }
            const JSON_ROOM: usize = $digits;
            #[inline(always)]
            fn put_json(self, buf: &mut [u8], at: usize, lim: usize, key: &[u8], _: &mut u64)
                -> usize {
                field::put_json_signed::<{ $span }>(buf, at, lim, key, i64::from(self))
            }
            const BIN: u8 = $crate::bin::BIN_SIGNED;
            #[inline(always)]
            fn put_bin<B: $crate::bin::BinBuf + ?Sized>(self, buf: &mut B, p: usize, col: usize, enc: &mut $crate::BinBlock, _key: u64, bits: &mut u64)
                -> usize {
                enc.put_num(buf, p, col, i64::from(self) as u64, bits)
            }
        }
    )*};
}
signed_column!(
    i64: 20, field::SPAN_64 => ColumnKind::I64,
    i32: 11, field::SPAN_I32 => ColumnKind::I32
);

impl<'a> Column<'a> for &'a str {
    const KIND: ColumnKind = ColumnKind::Text;
    #[inline(always)]
    fn put_field<S: FieldSink<'a>>(self, col: usize, s: &mut S) {
        s.text(col, self);
    }
    #[inline(always)]
    fn read<S: FieldSource<'a>>(
        s: &S,
        col: usize,
        name: &'static str,
        _empty: Self,
    ) -> Result<Self, S::Error> {
        s.text(col, name)
    }
    /// The comma and two quotes; the text itself may double (every byte a quote).
    const CSV_ROOM: usize = 3;
    #[inline(always)]
    fn csv_room(self) -> usize {
        Self::CSV_ROOM + 2 * self.len()
    }
    #[inline(always)]
    fn put_csv(self, buf: &mut [u8], at: usize, mask: usize, comma: bool) -> usize {
        field::put_text(buf, at, mask, comma, self.as_bytes())
    }
    /// The quotes.
    const JSON_ROOM: usize = 2;
    #[inline(always)]
    fn json_room(self) -> usize {
        Self::JSON_ROOM + self.len()
    }
    #[inline(always)]
    fn put_json(
        self,
        buf: &mut [u8],
        at: usize,
        lim: usize,
        key: &[u8],
        special: &mut u64,
    ) -> usize {
        field::put_json_text(buf, at, lim, key, self.as_bytes(), special)
    }
    const BIN: u8 = crate::bin::BIN_TEXT;
    /// The marker and the length (then the bytes).
    const BIN_ROOM: usize = 1 + crate::bin::BIN_NUM_ROOM;
    #[inline(always)]
    fn bin_text_len(self) -> usize {
        self.len()
    }
    #[inline(always)]
    fn put_bin<B: crate::bin::BinBuf + ?Sized>(
        self,
        buf: &mut B,
        p: usize,
        col: usize,
        enc: &mut crate::BinBlock,
        key: u64,
        bits: &mut u64,
    ) -> usize {
        enc.put_text(buf, p, col, self.as_bytes(), key, bits)
    }
    fn is_empty_text(self) -> bool {
        self.is_empty()
    }
}

/// Reads field `col` as a `T` (the macro's field reader, the type inferred from the field).
#[inline(always)]
pub fn read_col<'a, T: Column<'a>, S: FieldSource<'a>>(
    s: &S,
    col: usize,
    name: &'static str,
    empty: T,
) -> Result<T, S::Error> {
    T::read(s, col, name, empty)
}

/// [`read_col`] for a `nonempty` field.
#[inline(always)]
pub fn read_nonempty<'a, T: Column<'a>, S: FieldSource<'a>>(
    s: &S,
    col: usize,
    name: &'static str,
    empty: T,
) -> Result<T, S::Error> {
    let v = T::read(s, col, name, empty)?;
    if v.is_empty_text() {
        return Err(s.empty_value(col, name));
    }
    Ok(v)
}

/// Parses an unsigned decimal field; empty means "not known" and reads as 0.
#[inline(always)]
pub fn parse_u64(b: &[u8]) -> Option<u64> {
    if b.len() < 20 {
        // At most 19 digits: below 10^19 < 2^64, no overflow check needed.
        let mut v: u64 = 0;
        for &c in b {
            let d = c.wrapping_sub(b'0');
            if d > 9 {
                return None;
            }
            v = v * 10 + u64::from(d);
        }
        return Some(v);
    }
    let mut v: u64 = 0;
    for &c in b {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(u64::from(d))?;
    }
    Some(v)
}

/// Parses a signed decimal field; empty reads as `empty`.
#[inline]
pub fn parse_i64(b: &[u8], empty: i64) -> Option<i64> {
    match b {
        [] => Some(empty),
        // Down to i64::MIN, whose magnitude is not an i64.
        [b'-', rest @ ..] if !rest.is_empty() => {
            parse_u64(rest).and_then(|v| 0i64.checked_sub_unsigned(v))
        }
        _ => parse_u64(b).and_then(|v| i64::try_from(v).ok()),
    }
}

/// One CSV row as split by a reader: its fields as bytes.
pub trait CsvFields<'a> {
    /// Number of fields.
    fn len(&self) -> usize;
    /// Whether the row has no fields.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Field `i`, if there is one.
    fn get(&self, i: usize) -> Option<&'a [u8]>;
    /// Field `i` as text, `None` when absent or not UTF-8.
    fn text(&self, i: usize) -> Option<&'a str> {
        std::str::from_utf8(self.get(i)?).ok()
    }
}

/// The positions of a table's columns in one CSV file's header: columns are found by name,
/// so a file with extra or reordered columns still reads.
#[derive(Debug, Clone)]
pub struct CsvHeader {
    /// Per table field, its position in the file (`usize::MAX` when absent).
    pos: Vec<usize>,
    width: usize,
    /// The header's columns are the table's first `width` columns, in order.
    prefix: bool,
}

impl CsvHeader {
    /// Maps a header to `columns` (a table's column names). Every column whose `required`
    /// flag is set must be present; `what` names the file kind in the error.
    pub fn new<'h>(
        names: impl IntoIterator<Item = &'h [u8]>,
        columns: &'static [&'static str],
        required: &[bool],
        what: &str,
    ) -> Result<CsvHeader, String> {
        let mut pos = vec![usize::MAX; columns.len()];
        let mut width = 0;
        let mut prefix = true;
        for (i, name) in names.into_iter().enumerate() {
            width = i + 1;
            prefix &= columns.get(i).is_some_and(|c| c.as_bytes() == name);
            if let Some(c) = columns.iter().position(|c| c.as_bytes() == name) {
                pos[c] = i;
            }
        }
        for (c, name) in columns.iter().enumerate() {
            if required[c] && pos[c] == usize::MAX {
                return Err(format!(
                    "header has no `{name}` column (expected the h5prov {what} header: {})",
                    columns.join(",")
                ));
            }
        }
        Ok(CsvHeader { pos, width, prefix })
    }

    /// Number of columns in the header.
    pub fn width(&self) -> usize {
        self.width
    }

    /// Whether the header is exactly the table's columns, in order.
    pub fn is_standard(&self) -> bool {
        self.prefix && self.width == self.pos.len()
    }

    /// The header's width when its columns are the table's first columns, in order (all
    /// of them, or those of an older writer that had not the later columns yet); `None`
    /// for any other header.
    pub fn standard_prefix(&self) -> Option<usize> {
        self.prefix.then_some(self.width)
    }

    /// A row's fields as a [`FieldSource`], after checking its width.
    #[inline]
    pub fn source<'h, 'r, 'a, F: CsvFields<'a>>(
        &'h self,
        row: &'r F,
    ) -> Result<CsvSource<'h, 'r, F>, String> {
        if row.len() != self.width {
            return Err(format!(
                "{} fields, the header has {}",
                row.len(),
                self.width
            ));
        }
        Ok(CsvSource { header: self, row })
    }
}

/// A CSV row as a [`FieldSource`], with the messages of the analyzer's errors.
pub struct CsvSource<'h, 'r, F> {
    header: &'h CsvHeader,
    row: &'r F,
}

impl<'a, F: CsvFields<'a>> CsvSource<'_, '_, F> {
    #[inline(always)]
    fn field(&self, col: usize) -> &'a [u8] {
        self.row.get(self.header.pos[col]).unwrap_or(b"")
    }

    #[cold]
    fn bad_number(&self, col: usize, name: &str) -> String {
        format!(
            "column `{name}`: not a valid number: {:?}",
            String::from_utf8_lossy(self.field(col))
        )
    }
}

impl<'a, F: CsvFields<'a>> FieldSource<'a> for CsvSource<'_, '_, F> {
    type Error = String;

    #[inline(always)]
    fn unsigned(&self, col: usize, name: &'static str, empty: u64) -> Result<u64, String> {
        let f = self.field(col);
        if f.is_empty() {
            return Ok(empty);
        }
        parse_u64(f).ok_or_else(|| self.bad_number(col, name))
    }

    #[inline(always)]
    fn signed(&self, col: usize, name: &'static str, empty: i64) -> Result<i64, String> {
        parse_i64(self.field(col), empty).ok_or_else(|| self.bad_number(col, name))
    }

    #[inline(always)]
    fn text(&self, col: usize, name: &'static str) -> Result<&'a str, String> {
        let i = self.header.pos[col];
        if i == usize::MAX {
            return Ok("");
        }
        self.row
            .text(i)
            .ok_or_else(|| format!("column `{name}`: not valid UTF-8"))
    }

    #[cold]
    fn out_of_range(&self, col: usize, name: &'static str) -> String {
        self.bad_number(col, name)
    }

    #[cold]
    fn empty_value(&self, _col: usize, name: &'static str) -> String {
        format!("column `{name}` is empty")
    }
}

/// A field of a table's JSONL twin (`Option<number>` or `Cow<str>`): how it deserializes.
/// Strings borrow from the input unless they hold escapes; `null` numbers read as empty.
pub trait JsonField<'a>: Sized {
    /// Deserializes the field.
    fn de<'de: 'a, D: Deserializer<'de>>(d: D) -> Result<Self, D::Error>;
}

macro_rules! json_number {
    ($($t:ty),*) => {$(
        impl<'a> JsonField<'a> for Option<$t> {
            #[inline]
            fn de<'de: 'a, D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                serde::Deserialize::deserialize(d)
            }
        }
    )*};
}
json_number!(u64, u32, u8, i64, i32);

impl<'a> JsonField<'a> for Cow<'a, str> {
    #[inline]
    fn de<'de: 'a, D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Cow<'de, str>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Cow::Borrowed(v))
            }
            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Cow::Owned(v.to_owned()))
            }
            fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
                Ok(Cow::Owned(v))
            }
        }
        d.deserialize_str(V)
    }
}

/// Generates a record schema from its table (see the module documentation).
macro_rules! record_table {
    (
        $(#[$odoc:meta])*
        owned $Owned:ident;
        $(#[$rdoc:meta])*
        borrowed $Ref:ident;
        $(#[$jdoc:meta])*
        json $Json:ident;
        $(#[$cdoc:meta])*
        columns $COLUMNS:ident;
        what $what:literal;
        {
            $(
                $(#[$fdoc:meta])*
                $field:ident $col:literal : $ty:ident = $empty:literal, $rule:ident;
            )*
        }
    ) => {
        $(#[$cdoc])*
        pub const $COLUMNS: &[&str] = &[$($col),*];

        $(#[$odoc])*
        #[derive(Serialize, Deserialize, Debug, Clone, Default, PartialEq, Eq)]
        pub struct $Owned {
            $( $(#[$fdoc])* #[serde(rename = $col)] pub $field: $crate::table::record_table!(@owned $ty), )*
        }

        $(#[$rdoc])*
        #[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
        pub struct $Ref<'a> {
            $( $(#[$fdoc])* pub $field: $crate::table::record_table!(@borrowed 'a $ty), )*
        }

        $(#[$jdoc])*
        #[derive(Deserialize, Default, Debug)]
        #[serde(default, bound(deserialize = "'de: 'a"))]
        pub struct $Json<'a> {
            $(
                $(#[$fdoc])*
                #[serde(rename = $col, deserialize_with = "crate::table::JsonField::de")]
                pub $field: $crate::table::record_table!(@json 'a $ty),
            )*
        }

        impl Serialize for $Ref<'_> {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                use serde::ser::SerializeStruct;
                let mut st = s.serialize_struct(stringify!($Owned), $COLUMNS.len())?;
                $( st.serialize_field($col, &self.$field)?; )*
                st.end()
            }
        }

        impl<'a> $Ref<'a> {
            /// Per column, whether a CSV header must have it.
            pub const REQUIRED: &'static [bool] = &[$($crate::table::record_table!(@required $rule)),*];

            /// Appends the record as one CSV line (columns in order, text quoted per
            /// RFC 4180 only when it must be, `\n` at the end). Allocates nothing beyond
            /// growing `out`, once per record: by the record's room, then cut to the line
            /// (see `field.rs`).
            #[inline]
            pub fn write_csv(&self, out: &mut Vec<u8>) {
                use $crate::field::{PAD, TEXT_BUDGET};
                // The fast path's window: the room of the numbers and empty texts, and
                // some text, rounded up to a power of two.
                const WINDOW: usize = (1 $(
                    + <$crate::table::record_table!(@borrowed 'static $ty)
                        as $crate::table::Column<'static>>::CSV_ROOM
                )* + TEXT_BUDGET).next_power_of_two();
                let start = out.len();
                // Each field's room with its comma, and the `\n`.
                let room = 1 $( + $crate::table::Column::csv_room(self.$field) )*;
                let end = if room <= WINDOW {
                    out.resize(start + WINDOW + PAD, 0);
                    let w: &mut [u8; WINDOW + PAD] = out.last_chunk_mut().unwrap();
                    self.fields(w, WINDOW - 1)
                } else {
                    out.resize(start + room + PAD, 0);
                    self.fields(&mut out[start..], !0)
                };
                out.truncate(start + end);
            }

            /// Writes the CSV line at the start of `buf` (its room and `PAD` bytes, or
            /// the window), each field at `at & mask`; returns the line's length.
            #[inline(always)]
            fn fields(&self, buf: &mut [u8], mask: usize) -> usize {
                #[allow(non_camel_case_types)]
                enum C { $($field),* }
                let mut n = 0;
                $(
                    // A constant: a comma before every field but the first.
                    let comma = C::$field as usize != 0;
                    n = $crate::table::Column::put_csv(self.$field, buf, n, mask, comma);
                )*
                buf[n & mask] = b'\n';
                n + 1
            }

            /// Appends the record as one JSONL line (keys in column order, as `serde_json`
            /// writes it). Allocates nothing beyond growing `out`, once per record, like
            /// [`write_csv`](Self::write_csv); text that needs escapes (rare) makes it write
            /// the record again, through `serde_json`.
            #[inline]
            pub fn write_jsonl(&self, out: &mut Vec<u8>) {
                use $crate::field::{PAD, TEXT_BUDGET};
                // The keys with their punctuation (`{"name":`, `,"name":`), and `}\n`.
                const KEYS: usize = 2 $( + $col.len() + 4 )*;
                // The fast path's window: the room of the keys, numbers and empty texts,
                // and some text.
                const WINDOW: usize = KEYS $(
                    + <$crate::table::record_table!(@borrowed 'static $ty)
                        as $crate::table::Column<'static>>::JSON_ROOM
                )* + TEXT_BUDGET;
                let start = out.len();
                let room = KEYS $( + $crate::table::Column::json_room(self.$field) )*;
                let mut special = 0;
                let end = if room <= WINDOW {
                    out.resize(start + WINDOW + PAD, 0);
                    let w: &mut [u8; WINDOW + PAD] = out.last_chunk_mut().unwrap();
                    self.jsonl_fields(w, WINDOW - 1, &mut special)
                } else {
                    out.resize(start + room + PAD, 0);
                    self.jsonl_fields(&mut out[start..], !0, &mut special)
                };
                if special == 0 {
                    out.truncate(start + end);
                } else {
                    out.truncate(start);
                    self.write_jsonl_escaped(out);
                }
            }

            /// Writes the JSONL line at the start of `buf` (its room and `PAD` bytes, or
            /// the window), each field with its key at `at.min(lim)`, text unescaped;
            /// returns the line's length. ORs a nonzero value into `special` when some
            /// text needs escapes.
            #[inline(always)]
            fn jsonl_fields(&self, buf: &mut [u8], lim: usize, special: &mut u64) -> usize {
                #[allow(non_camel_case_types)]
                enum C { $($field),* }
                let mut n = 0;
                $(
                    // A constant: `{` before the first key, `,` before the others.
                    let key = if C::$field as usize == 0 {
                        concat!("{\"", $col, "\":")
                    } else {
                        concat!(",\"", $col, "\":")
                    };
                    n = $crate::table::Column::put_json(
                        self.$field, buf, n, lim, key.as_bytes(), special);
                )*
                $crate::field::put_json_end(buf, n, lim, b"}\n")
            }

            /// [`write_jsonl`](Self::write_jsonl) for a record whose text needs escapes.
            #[cold]
            #[inline(never)]
            fn write_jsonl_escaped(&self, out: &mut Vec<u8>) {
                serde_json::to_writer(&mut *out, self).expect("writing to a Vec cannot fail");
                out.push(b'\n');
            }

            /// Builds a record from its fields, read in table order; the first field that
            /// does not read is the error.
            #[inline(always)]
            pub fn from_source<S: $crate::table::FieldSource<'a>>(
                s: &S,
            ) -> Result<Self, S::Error> {
                #[allow(non_camel_case_types)]
                enum C { $($field),* }
                Ok($Ref {
                    $( $field: $crate::table::record_table!(@read $rule, s, C::$field as usize, $col, $empty), )*
                })
            }

            /// Maps a CSV header to this table's columns.
            pub fn csv_header<'h>(
                names: impl IntoIterator<Item = &'h [u8]>,
            ) -> Result<$crate::table::CsvHeader, String> {
                $crate::table::CsvHeader::new(names, $COLUMNS, Self::REQUIRED, $what)
            }

            /// Parses one CSV row of a file with header `h`.
            #[inline]
            pub fn from_csv<F: $crate::table::CsvFields<'a>>(
                h: &$crate::table::CsvHeader,
                row: &F,
            ) -> Result<Self, String> {
                Self::from_source(&h.source(row)?)
            }

            /// Per column, its declared type (what columnar schemas, such as the analyzer's
            /// Parquet export, are built from).
            pub const KINDS: &'static [$crate::table::ColumnKind] = &[$(
                <$crate::table::record_table!(@borrowed 'static $ty) as $crate::table::Column<'static>>::KIND
            ),*];

            /// Hands every field to `s`, in column order (the columnar encoders' input).
            #[inline]
            pub fn write_fields<S: $crate::table::FieldSink<'a>>(&self, s: &mut S) {
                #[allow(non_camel_case_types)]
                enum C { $($field),* }
                $( $crate::table::Column::put_field(self.$field, C::$field as usize, s); )*
            }

            /// Per column, its type code in a binary file header.
            pub const BIN_TYPES: &'static [u8] = &[$(
                <$crate::table::record_table!(@borrowed 'static $ty) as $crate::table::Column<'static>>::BIN
            ),*];

            /// Appends this table's binary file header (magic, layout version, columns).
            pub fn write_bin_header(out: &mut Vec<u8>) {
                $crate::bin::write_bin_header(out, $what, $COLUMNS, Self::BIN_TYPES);
            }

            /// Appends the record in the binary encoding, in the block `enc` is in (a new
            /// block starts with its marker): its length (`u32` LE), the bitmap of the
            /// columns that changed since the block's previous record, then their values
            /// in column order (numbers as deltas, text by id; see `bin.rs`). Allocates
            /// nothing once the encoder's buffers have grown.
            #[inline]
            pub fn write_bin(&self, out: &mut Vec<u8>, enc: &mut $crate::BinEncoder) {
                self.write_bin_keyed(out, enc, |_| 0);
            }

            /// [`write_bin`](Self::write_bin) with a key for some text columns: `key(c)`,
            /// when not 0, stands for column `c`'s text, and must always stand for the
            /// same text (see [`BinBlock::put_text`]($crate::BinBlock::put_text)). `key`
            /// is called with each column's position, a constant once inlined.
            #[inline]
            pub fn write_bin_keyed(
                &self,
                out: &mut Vec<u8>,
                enc: &mut $crate::BinEncoder,
                key: impl Fn(usize) -> u64,
            ) {
                const _: () = assert!($COLUMNS.len() <= $crate::bin::BIN_MAX_COLUMNS);
                const BITMAP: usize = $crate::bin::bin_bitmap_len($COLUMNS.len());
                const FIXED: usize = 4 + BITMAP $( + <$crate::table::record_table!(@borrowed 'static $ty)
                    as $crate::table::Column<'static>>::BIN_ROOM )*;
                let room = FIXED $( + $crate::table::Column::bin_text_len(self.$field) )*;
                let (block, window, big) = enc.begin(out, room);
                if room <= $crate::bin::BIN_WINDOW {
                    let end = self.put_bin_fields::<_, BITMAP>(window, block, &key);
                    $crate::bin::bin_end(out, window, end);
                } else {
                    let end = self.put_bin_fields::<_, BITMAP>(big, block, &key);
                    $crate::bin::bin_end(out, big, end);
                }
            }

            /// Writes the bitmap and the fields after the record's length; returns where
            /// they end.
            #[inline(always)]
            fn put_bin_fields<B: $crate::bin::BinBuf + ?Sized, const BITMAP: usize>(
                &self,
                buf: &mut B,
                block: &mut $crate::BinBlock,
                key: &impl Fn(usize) -> u64,
            ) -> usize {
                #[allow(non_camel_case_types)]
                enum C { $($field),* }
                let mut bits = 0u64;
                let p = 4 + BITMAP;
                $( let p = $crate::table::Column::put_bin(
                    self.$field, buf, p, C::$field as usize, block, key(C::$field as usize),
                    &mut bits); )*
                $crate::bin::put_bitmap(buf, BITMAP, bits);
                p
            }

            /// Maps a binary header body (after the magic and its length) to this table's
            /// columns: the decoder of the file's records.
            pub fn bin_decoder(body: &[u8]) -> Result<$crate::BinDecoder, String> {
                $crate::BinDecoder::new(body, $COLUMNS, Self::BIN_TYPES, Self::REQUIRED, $what)
            }

            /// Parses one binary record, already decoded into `vals` by
            /// [`BinDecoder::decode`]($crate::BinDecoder::decode).
            #[inline]
            pub fn from_bin(
                h: &'a $crate::BinDecoder,
                vals: &'a [$crate::bin::BinValue],
            ) -> Result<Self, String> {
                Self::from_source(&h.source(vals))
            }

            /// The owned copy.
            pub fn to_owned_record(&self) -> $Owned {
                $Owned { $( $field: $crate::table::record_table!(@to_owned $ty, self.$field), )* }
            }
        }

        impl $Owned {
            /// The record borrowed.
            pub fn borrowed(&self) -> $Ref<'_> {
                $Ref { $( $field: $crate::table::record_table!(@borrow $ty, self.$field), )* }
            }

            /// Overwrites every field with `r`'s, reusing the strings' buffers (no
            /// allocation once they have grown; equal text is not copied again).
            pub fn set_from(&mut self, r: &$Ref<'_>) {
                $( $crate::table::record_table!(@assign $ty, self.$field, r.$field); )*
            }
        }

        impl<'a> $Json<'a> {
            /// The record, with the table's empty values for missing keys; an error when a
            /// `nonempty` key is missing or empty.
            pub fn record(&self) -> Result<$Ref<'_>, String> {
                Ok($Ref {
                    $(
                        $field: $crate::table::record_table!(@json_rule $rule, $col,
                            $crate::table::record_table!(@json_value $ty, self.$field, $empty)),
                    )*
                })
            }
        }
    };

    (@owned str) => { String };
    (@owned $t:ident) => { $t };
    (@borrowed $lt:lifetime str) => { &$lt str };
    (@borrowed $lt:lifetime $t:ident) => { $t };
    (@json $lt:lifetime str) => { std::borrow::Cow<$lt, str> };
    (@json $lt:lifetime $t:ident) => { Option<$t> };

    (@required req) => { true };
    (@required nonempty) => { true };
    (@required $r:ident) => { false };

    (@read opt, $s:ident, $i:expr, $col:literal, $e:literal) => {
        $crate::table::read_col($s, $i, $col, $e)?
    };
    (@read req, $s:ident, $i:expr, $col:literal, $e:literal) => {
        $crate::table::read_col($s, $i, $col, $e)?
    };
    (@read nonempty, $s:ident, $i:expr, $col:literal, $e:literal) => {
        $crate::table::read_nonempty($s, $i, $col, $e)?
    };
    (@read min1, $s:ident, $i:expr, $col:literal, $e:literal) => {
        std::cmp::max($crate::table::read_col($s, $i, $col, $e)?, 1)
    };

    (@json_value str, $v:expr, $e:literal) => { &*$v };
    (@json_value $t:ident, $v:expr, $e:literal) => { $v.unwrap_or($e) };
    (@json_rule nonempty, $col:literal, $v:expr) => {{
        let v = $v;
        if v.is_empty() {
            return Err(concat!("missing or empty `", $col, "`").into());
        }
        v
    }};
    (@json_rule min1, $col:literal, $v:expr) => { std::cmp::max($v, 1) };
    (@json_rule $r:ident, $col:literal, $v:expr) => { $v };

    (@to_owned str, $v:expr) => { $v.to_string() };
    (@to_owned $t:ident, $v:expr) => { $v };
    (@borrow str, $v:expr) => { &$v };
    (@borrow $t:ident, $v:expr) => { $v };
    (@assign str, $dst:expr, $v:expr) => {
        if $dst != $v {
            $dst.clear();
            $dst.push_str($v);
        }
    };
    (@assign $t:ident, $dst:expr, $v:expr) => { $dst = $v };
}
pub(crate) use record_table;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers() {
        assert_eq!(parse_u64(b""), Some(0));
        assert_eq!(parse_u64(b"123"), Some(123));
        assert_eq!(parse_u64(b"18446744073709551615"), Some(u64::MAX));
        assert_eq!(parse_u64(b"18446744073709551616"), None);
        assert_eq!(
            parse_u64(b"9999999999999999999"),
            Some(9_999_999_999_999_999_999)
        );
        assert_eq!(parse_u64(b"00000000000000000000042"), Some(42));
        assert_eq!(parse_u64(b"99999999999999999999"), None);
        assert_eq!(parse_u64(b"123456789012345678x"), None);
        assert_eq!(parse_u64(b"1a"), None);
        assert_eq!(parse_u64(b"-1"), None);
        assert_eq!(parse_i64(b"-1", 0), Some(-1));
        assert_eq!(parse_i64(b"", -1), Some(-1));
        assert_eq!(parse_i64(b"-", 0), None);
        assert_eq!(parse_i64(b"42", 0), Some(42));
        assert_eq!(parse_i64(b"-9223372036854775808", 0), Some(i64::MIN));
        assert_eq!(parse_i64(b"-9223372036854775809", 0), None);
    }
}

//! Compact JSON writer for the streamed report: serde's data model written byte for byte as
//! `serde_json::to_writer` writes it (same escapes, same number formatting: itoa for integers,
//! zmij for floats, non-finite floats as null), only faster on what the report is made of.
//!
//! Why not serde_json: a report is mostly object keys and prose (event details, evidence,
//! display filters), and serde_json runs every string, keys included, through a byte-at-a-time
//! escape table (~15 instructions a byte; a third of the JSON writing time on the 1 GB SCTP
//! benchmark). Here a string is scanned 8 bytes at a time for the three things JSON must escape
//! (RFC 8259 7: `"`, `\` and control characters) and copied in one piece when it has none.
//! `tests::same_bytes_as_serde_json` holds the two writers to identical output.

use std::fmt::{self, Display};
use std::io;

use serde::ser::{self, Serialize};

/// Writes `value` as compact JSON to `out` (one `write_all`).
pub fn to_writer<W: io::Write + ?Sized, T: Serialize + ?Sized>(
    out: &mut W,
    value: &T,
) -> io::Result<()> {
    let mut w = Writer {
        out: Vec::with_capacity(8 << 10),
    };
    value.serialize(&mut w).map_err(io::Error::other)?;
    out.write_all(&w.out)
}

/// `value` as compact JSON bytes.
pub fn to_vec<T: Serialize + ?Sized>(value: &T) -> Result<Vec<u8>, Error> {
    let mut w = Writer { out: Vec::new() };
    value.serialize(&mut w)?;
    Ok(w.out)
}

/// A value serde cannot put in JSON (a map key that is not a string or number, or a
/// `Serialize` impl's own error).
#[derive(Debug)]
pub struct Error(String);

impl Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}

impl ser::Error for Error {
    fn custom<T: Display>(msg: T) -> Self {
        Error(msg.to_string())
    }
}

/// The ten `serialize_{i,u}{8,16,32,64,128}` methods of a serializer, each `$body` on `self`
/// and the value (every integer is written by itoa, quoted or not).
macro_rules! integers {
    (|$me:ident, $v:ident| $body:expr) => {
        integers!(@ $me $v $body; serialize_i8 i8, serialize_i16 i16, serialize_i32 i32,
            serialize_i64 i64, serialize_i128 i128, serialize_u8 u8, serialize_u16 u16,
            serialize_u32 u32, serialize_u64 u64, serialize_u128 u128);
    };
    (@ $me:ident $v:ident $body:expr; $($name:ident $t:ty),*) => {
        $(
            fn $name(self, $v: $t) -> Result<(), Error> {
                let $me = self;
                $body
            }
        )*
    };
}

/// The output buffer the serializer appends to.
pub struct Writer {
    out: Vec<u8>,
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// True when one of the 8 bytes of `w` is a control character, `"` or `\` (bytes >= 0x80, the
/// rest of UTF-8 sequences, never match).
#[inline]
fn needs_escape(w: u64) -> bool {
    // A zero byte of `x` sets that byte's high bit in `has_zero(x)`; a borrow only propagates
    // past a byte that already matched, so a clean word never reports one.
    let has_zero = |x: u64| x.wrapping_sub(ONES) & !x & HIGHS;
    let below_space = w.wrapping_sub(ONES * 0x20) & !w & HIGHS;
    (below_space | has_zero(w ^ (ONES * b'"' as u64)) | has_zero(w ^ (ONES * b'\\' as u64))) != 0
}

/// Index of the first byte of `s` that JSON must escape, if any: 8 bytes at a time (the last
/// word overlapping the one before it), byte by byte below 8.
#[inline]
fn first_escape(s: &[u8]) -> Option<usize> {
    let word = |at: usize| u64::from_le_bytes(s[at..at + 8].try_into().expect("8 bytes"));
    if s.len() < 8 {
        return s.iter().position(|&b| must_escape(b));
    }
    let mut at = 0;
    while at + 8 <= s.len() {
        if needs_escape(word(at)) {
            return s[at..at + 8]
                .iter()
                .position(|&b| must_escape(b))
                .map(|p| at + p);
        }
        at += 8;
    }
    let last = s.len() - 8;
    if at < s.len() && needs_escape(word(last)) {
        return s[last..]
            .iter()
            .position(|&b| must_escape(b))
            .map(|p| last + p);
    }
    None
}

/// RFC 8259 7: quotation mark, reverse solidus and the control characters U+0000 to U+001F.
#[inline]
fn must_escape(b: u8) -> bool {
    b < 0x20 || b == b'"' || b == b'\\'
}

impl Writer {
    /// A JSON string (RFC 8259 7), escaped as serde_json escapes it.
    #[inline]
    fn string(&mut self, s: &str) {
        let bytes = s.as_bytes();
        self.out.reserve(bytes.len() + 2);
        self.out.push(b'"');
        let mut rest = bytes;
        while let Some(at) = first_escape(rest) {
            self.out.extend_from_slice(&rest[..at]);
            let b = rest[at];
            let short = match b {
                b'"' => Some(b'"'),
                b'\\' => Some(b'\\'),
                0x08 => Some(b'b'),
                0x09 => Some(b't'),
                0x0a => Some(b'n'),
                0x0c => Some(b'f'),
                0x0d => Some(b'r'),
                _ => None,
            };
            match short {
                Some(c) => self.out.extend_from_slice(&[b'\\', c]),
                None => {
                    const HEX: &[u8; 16] = b"0123456789abcdef";
                    self.out.extend_from_slice(b"\\u00");
                    self.out.push(HEX[usize::from(b >> 4)]);
                    self.out.push(HEX[usize::from(b & 0xf)]);
                }
            }
            rest = &rest[at + 1..];
        }
        self.out.extend_from_slice(rest);
        self.out.push(b'"');
    }

    #[inline]
    fn int(&mut self, v: impl itoa::Integer) {
        self.out
            .extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
    }

    #[inline]
    fn f64(&mut self, v: f64) {
        if v.is_finite() {
            self.out
                .extend_from_slice(zmij::Buffer::new().format_finite(v).as_bytes());
        } else {
            self.out.extend_from_slice(b"null");
        }
    }

    #[inline]
    fn f32(&mut self, v: f32) {
        if v.is_finite() {
            self.out
                .extend_from_slice(zmij::Buffer::new().format_finite(v).as_bytes());
        } else {
            self.out.extend_from_slice(b"null");
        }
    }
}

/// An array or object being written; `close` is what ends it (`]`, `}`, or `]}` / `}}` for an
/// enum variant wrapped in an object).
pub struct Compound<'a> {
    w: &'a mut Writer,
    first: bool,
    close: &'static [u8],
}

impl Compound<'_> {
    #[inline]
    fn comma(&mut self) {
        if self.first {
            self.first = false;
        } else {
            self.w.out.push(b',');
        }
    }

    /// A struct field's name: serde's derive gives the Rust field name or its `rename`, which
    /// never holds a character JSON escapes, so it is copied as it is (held to that in debug
    /// builds, which the tests run).
    #[inline]
    fn key(&mut self, key: &'static str) {
        debug_assert!(
            first_escape(key.as_bytes()).is_none(),
            "field name {key:?} needs JSON escapes"
        );
        self.comma();
        let out = &mut self.w.out;
        out.reserve(key.len() + 3);
        out.push(b'"');
        out.extend_from_slice(key.as_bytes());
        out.extend_from_slice(b"\":");
    }
}

impl<'a> ser::Serializer for &'a mut Writer {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Compound<'a>;
    type SerializeTuple = Compound<'a>;
    type SerializeTupleStruct = Compound<'a>;
    type SerializeTupleVariant = Compound<'a>;
    type SerializeMap = Compound<'a>;
    type SerializeStruct = Compound<'a>;
    type SerializeStructVariant = Compound<'a>;

    fn serialize_bool(self, v: bool) -> Result<(), Error> {
        self.out
            .extend_from_slice(if v { b"true" } else { b"false" });
        Ok(())
    }
    integers!(|w, v| {
        w.int(v);
        Ok(())
    });
    fn serialize_f32(self, v: f32) -> Result<(), Error> {
        self.f32(v);
        Ok(())
    }
    fn serialize_f64(self, v: f64) -> Result<(), Error> {
        self.f64(v);
        Ok(())
    }
    fn serialize_char(self, v: char) -> Result<(), Error> {
        self.string(v.encode_utf8(&mut [0; 4]));
        Ok(())
    }
    fn serialize_str(self, v: &str) -> Result<(), Error> {
        self.string(v);
        Ok(())
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<(), Error> {
        // serde_json: an array of numbers.
        self.out.push(b'[');
        for (i, b) in v.iter().enumerate() {
            if i > 0 {
                self.out.push(b',');
            }
            self.int(*b);
        }
        self.out.push(b']');
        Ok(())
    }
    fn serialize_none(self) -> Result<(), Error> {
        self.out.extend_from_slice(b"null");
        Ok(())
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), Error> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<(), Error> {
        self.out.extend_from_slice(b"null");
        Ok(())
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<(), Error> {
        self.serialize_unit()
    }
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<(), Error> {
        self.string(variant);
        Ok(())
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        self.out.push(b'{');
        self.string(variant);
        self.out.push(b':');
        value.serialize(&mut *self)?;
        self.out.push(b'}');
        Ok(())
    }
    fn serialize_seq(self, _len: Option<usize>) -> Result<Compound<'a>, Error> {
        self.out.push(b'[');
        Ok(Compound {
            w: self,
            first: true,
            close: b"]",
        })
    }
    fn serialize_tuple(self, len: usize) -> Result<Compound<'a>, Error> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        len: usize,
    ) -> Result<Compound<'a>, Error> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Compound<'a>, Error> {
        self.out.push(b'{');
        self.string(variant);
        self.out.extend_from_slice(b":[");
        Ok(Compound {
            w: self,
            first: true,
            close: b"]}",
        })
    }
    fn serialize_map(self, _len: Option<usize>) -> Result<Compound<'a>, Error> {
        self.out.push(b'{');
        Ok(Compound {
            w: self,
            first: true,
            close: b"}",
        })
    }
    fn serialize_struct(self, _name: &'static str, len: usize) -> Result<Compound<'a>, Error> {
        self.serialize_map(Some(len))
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Compound<'a>, Error> {
        self.out.push(b'{');
        self.string(variant);
        self.out.extend_from_slice(b":{");
        Ok(Compound {
            w: self,
            first: true,
            close: b"}}",
        })
    }
}

impl ser::SerializeSeq for Compound<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.comma();
        value.serialize(&mut *self.w)
    }
    fn end(self) -> Result<(), Error> {
        self.w.out.extend_from_slice(self.close);
        Ok(())
    }
}

impl ser::SerializeTuple for Compound<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        ser::SerializeSeq::serialize_element(self, value)
    }
    fn end(self) -> Result<(), Error> {
        ser::SerializeSeq::end(self)
    }
}

impl ser::SerializeTupleStruct for Compound<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        ser::SerializeSeq::serialize_element(self, value)
    }
    fn end(self) -> Result<(), Error> {
        ser::SerializeSeq::end(self)
    }
}

impl ser::SerializeTupleVariant for Compound<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        ser::SerializeSeq::serialize_element(self, value)
    }
    fn end(self) -> Result<(), Error> {
        ser::SerializeSeq::end(self)
    }
}

impl ser::SerializeMap for Compound<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Error> {
        self.comma();
        key.serialize(KeyWriter(&mut *self.w))?;
        self.w.out.push(b':');
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        value.serialize(&mut *self.w)
    }
    fn end(self) -> Result<(), Error> {
        ser::SerializeSeq::end(self)
    }
}

impl ser::SerializeStruct for Compound<'_> {
    type Ok = ();
    type Error = Error;
    #[inline]
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        self.key(key);
        value.serialize(&mut *self.w)
    }
    fn end(self) -> Result<(), Error> {
        ser::SerializeSeq::end(self)
    }
}

impl ser::SerializeStructVariant for Compound<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        ser::SerializeStruct::serialize_field(self, key, value)
    }
    fn end(self) -> Result<(), Error> {
        ser::SerializeSeq::end(self)
    }
}

/// A map key: JSON keys are strings, so numbers and booleans are quoted (as serde_json does);
/// anything else is an error.
struct KeyWriter<'a>(&'a mut Writer);

fn key_error() -> Error {
    Error("key must be a string".to_string())
}

impl KeyWriter<'_> {
    fn quoted(self, f: impl FnOnce(&mut Writer)) -> Result<(), Error> {
        self.0.out.push(b'"');
        f(self.0);
        self.0.out.push(b'"');
        Ok(())
    }
}

impl ser::Serializer for KeyWriter<'_> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = ser::Impossible<(), Error>;
    type SerializeTuple = ser::Impossible<(), Error>;
    type SerializeTupleStruct = ser::Impossible<(), Error>;
    type SerializeTupleVariant = ser::Impossible<(), Error>;
    type SerializeMap = ser::Impossible<(), Error>;
    type SerializeStruct = ser::Impossible<(), Error>;
    type SerializeStructVariant = ser::Impossible<(), Error>;

    fn serialize_bool(self, v: bool) -> Result<(), Error> {
        self.quoted(|w| w.out.extend_from_slice(if v { b"true" } else { b"false" }))
    }
    integers!(|k, v| k.quoted(|w| w.int(v)));
    fn serialize_f32(self, v: f32) -> Result<(), Error> {
        if !v.is_finite() {
            return Err(Error("float key must be finite".to_string()));
        }
        self.quoted(|w| w.f32(v))
    }
    fn serialize_f64(self, v: f64) -> Result<(), Error> {
        if !v.is_finite() {
            return Err(Error("float key must be finite".to_string()));
        }
        self.quoted(|w| w.f64(v))
    }
    fn serialize_char(self, v: char) -> Result<(), Error> {
        self.0.string(v.encode_utf8(&mut [0; 4]));
        Ok(())
    }
    fn serialize_str(self, v: &str) -> Result<(), Error> {
        self.0.string(v);
        Ok(())
    }
    fn serialize_bytes(self, _v: &[u8]) -> Result<(), Error> {
        Err(key_error())
    }
    fn serialize_none(self) -> Result<(), Error> {
        Err(key_error())
    }
    fn serialize_some<T: Serialize + ?Sized>(self, _value: &T) -> Result<(), Error> {
        Err(key_error())
    }
    fn serialize_unit(self) -> Result<(), Error> {
        Err(key_error())
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<(), Error> {
        Err(key_error())
    }
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<(), Error> {
        self.0.string(variant);
        Ok(())
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _value: &T,
    ) -> Result<(), Error> {
        Err(key_error())
    }
    fn serialize_seq(self, _len: Option<usize>) -> Result<Self::SerializeSeq, Error> {
        Err(key_error())
    }
    fn serialize_tuple(self, _len: usize) -> Result<Self::SerializeTuple, Error> {
        Err(key_error())
    }
    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleStruct, Error> {
        Err(key_error())
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleVariant, Error> {
        Err(key_error())
    }
    fn serialize_map(self, _len: Option<usize>) -> Result<Self::SerializeMap, Error> {
        Err(key_error())
    }
    fn serialize_struct(
        self,
        _name: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStruct, Error> {
        Err(key_error())
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStructVariant, Error> {
        Err(key_error())
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde::Serialize;

    use super::*;

    fn same<T: Serialize + ?Sized>(v: &T) {
        let ours = to_vec(v).expect("ours serialises");
        let theirs = serde_json::to_vec(v).expect("serde_json serialises");
        assert_eq!(
            String::from_utf8_lossy(&ours),
            String::from_utf8_lossy(&theirs)
        );
    }

    #[test]
    fn strings_escape_as_serde_json_does() {
        let mut all = String::new();
        for c in 0u32..0x100 {
            all.push(char::from_u32(c).unwrap());
        }
        same(&all);
        for s in [
            "",
            "plain",
            "exactly8",
            "quote \" at 6",
            "1234567\"",
            "12345678\\",
            "tab\there, newline\n, cr\r, ff\x0c, bs\x08, nul\0, us\x1f, del\x7f",
            "µs after the ABORT — ünïcödé 𝄞",
            "\"\"\"\"\"\"\"\"\"\"",
            "a long run of plain text that is longer than several words of eight bytes",
        ] {
            same(s);
            // At every alignment within the 8-byte scan.
            for k in 0..9 {
                same(&format!("{}{s}", "x".repeat(k)));
            }
        }
    }

    #[test]
    fn numbers_format_as_serde_json_does() {
        for v in [
            0.0,
            -0.0,
            1.0,
            40.203500000000005,
            1e-7,
            1.5e300,
            -3.25,
            f64::NAN,
            f64::INFINITY,
            f64::MIN_POSITIVE,
            123456789.125,
        ] {
            same(&v);
            same(&(v as f32));
        }
        same(&[u64::MAX, 0, 7]);
        same(&[i64::MIN, -1, 0]);
        same(&(u128::MAX, i128::MIN, 'x', true, false, ()));
        same(&Some(3u8));
        same(&None::<u8>);
    }

    #[derive(Serialize)]
    enum E {
        Unit,
        New(u8),
        Tuple(u8, String),
        Struct { a: u8, b: Option<String> },
    }

    #[derive(Serialize)]
    struct Inner {
        x: f64,
        #[serde(rename = "odd \"key\"")]
        odd: Vec<u8>,
    }

    #[derive(Serialize)]
    struct Outer {
        name: String,
        empty: Vec<u32>,
        list: Vec<E>,
        #[serde(flatten)]
        inner: Inner,
        map: BTreeMap<u32, String>,
        bmap: BTreeMap<bool, u8>,
        smap: BTreeMap<String, Option<f64>>,
        #[serde(with = "serde_bytes_like")]
        bytes: Vec<u8>,
        value: serde_json::Value,
        unit: (),
    }

    mod serde_bytes_like {
        pub fn serialize<S: serde::Serializer>(b: &[u8], s: S) -> Result<S::Ok, S::Error> {
            s.serialize_bytes(b)
        }
    }

    #[test]
    fn the_data_model_writes_as_serde_json_writes_it() {
        let v = Outer {
            name: "n".into(),
            empty: vec![],
            list: vec![
                E::Unit,
                E::New(1),
                E::Tuple(2, "t".into()),
                E::Struct { a: 3, b: None },
            ],
            inner: Inner {
                x: 0.1,
                odd: vec![1, 2],
            },
            map: [(1, "one".to_string()), (20, "twenty".to_string())].into(),
            bmap: [(true, 1), (false, 0)].into(),
            smap: [("k\n".to_string(), Some(1.5)), ("z".to_string(), None)].into(),
            bytes: vec![0, 255],
            value: serde_json::json!({"a": [1, -2, 3.5, null, "s"], "b": {"c": true}}),
            unit: (),
        };
        same(&v);
        let mut sink = Vec::new();
        to_writer(&mut sink, &v).unwrap();
        assert_eq!(sink, serde_json::to_vec(&v).unwrap());
    }

    #[test]
    fn a_key_that_cannot_be_a_string_is_an_error_not_a_panic() {
        let m: BTreeMap<Vec<u8>, u8> = [(vec![1], 1)].into();
        assert!(to_vec(&m).is_err());
        let f: BTreeMap<String, f64> = [("nan".to_string(), f64::NAN)].into();
        same(&f);
    }

    #[test]
    fn the_scan_finds_every_byte_that_needs_an_escape() {
        for b in 0u8..=255 {
            for at in 0..8 {
                let mut w = [b'a'; 8];
                w[at] = b;
                let expect = must_escape(b);
                assert_eq!(
                    needs_escape(u64::from_le_bytes(w)),
                    expect,
                    "byte {b:#x} at {at}"
                );
            }
        }
    }
}

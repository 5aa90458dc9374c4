//! Compact JSON out: the one writer of every JSON string the core produces, and a serde
//! `Serializer` that uses it (byte for byte what `serde_json::to_writer` writes).
//!
//! Why: `serde_json` escapes a string one byte at a time (a table load and a branch per byte),
//! which was a fifth of `from_response` and a large share of every request written. Here the
//! next byte that needs an escape is found 16 bytes at a time (a branch-free test of each block
//! that the compiler vectorises; `unsafe` is forbidden in the crate), and clean runs are copied
//! whole. The escapes are `serde_json`'s, which are msgspec's (the canonical JSON must equal
//! msgspec's encoding): `\"`, `\\`, `\b \t \n \f \r`, every other control character as
//! `\u00XX` (lowercase hex); DEL, non-ASCII and U+2028/U+2029 are written as they are (UTF-8).
//!
//! Everything but strings (numbers, floats, byte arrays) is handed to `serde_json` itself, so
//! numbers are its digits by construction; `serde_json::value::RawValue` is written as it is.

use std::fmt::Display;

use serde::ser::{self, Error as _, Serialize};

/// `serde_json`'s marker for a `RawValue` (its Serialize impl is a one-field struct of this name).
const RAW_VALUE_TOKEN: &str = "$serde_json::private::RawValue";

/// How many bytes the scan tests at once.
const BLOCK: usize = 16;

/// Whether `byte` must be escaped inside a JSON string: a quote, a backslash, a control
/// character. (Also the bytes that end a plain run of string text when reading.)
#[inline]
pub(crate) fn needs_escape(byte: u8) -> bool {
    byte < 0x20 || byte == b'"' || byte == b'\\'
}

/// The position of the first byte at or after `from` that needs an escape, else `bytes.len()`.
/// Clean 16-byte blocks are skipped with one vectorised test each; the byte is then found 8 at
/// a time (SWAR: the lowest flagged byte of a word is always a true one).
#[inline]
pub(crate) fn next_escape(bytes: &[u8], from: usize) -> usize {
    let mut at = from;
    let Some(mut rest) = bytes.get(from..) else { return bytes.len() };
    while let Some((block, tail)) = rest.split_first_chunk::<BLOCK>() {
        // non-zero exactly for the bytes to escape, in byte arithmetic the compiler keeps in
        // vector lanes (saturating subtractions, xor, or): comparisons cost it more here
        let hit = block.iter().fold(0u8, |hit, &b| {
            hit | 0x20u8.saturating_sub(b) | 1u8.saturating_sub(b ^ b'"') | 1u8.saturating_sub(b ^ b'\\')
        });
        if hit != 0 {
            break;
        }
        at += BLOCK;
        rest = tail;
    }
    while let Some((word, tail)) = rest.split_first_chunk::<8>() {
        let mask = escape_mask(u64::from_le_bytes(*word));
        if mask != 0 {
            return at + (mask.trailing_zeros() / 8) as usize;
        }
        at += 8;
        rest = tail;
    }
    rest.iter().position(|&b| needs_escape(b)).map_or(bytes.len(), |i| at + i)
}

/// The high bit of each byte of `word` (little-endian) that may need an escape; the lowest one
/// set is exact (borrows only run upwards), the ones above it may be false.
#[inline]
fn escape_mask(word: u64) -> u64 {
    const ONES: u64 = u64::MAX / 255;
    const HIGH: u64 = ONES << 7;
    let control = word.wrapping_sub(ONES * 0x20) & !word;
    let quote = word ^ (ONES * u64::from(b'"'));
    let quote = quote.wrapping_sub(ONES) & !quote;
    let backslash = word ^ (ONES * u64::from(b'\\'));
    let backslash = backslash.wrapping_sub(ONES) & !backslash;
    (control | quote | backslash) & HIGH
}

/// Append `text` to `out` as a JSON string (quotes included).
pub(crate) fn write_str(out: &mut Vec<u8>, text: &str) {
    out.reserve(text.len() + 2);
    out.push(b'"');
    write_str_contents(out, text.as_bytes());
    out.push(b'"');
}

/// The escaped contents of a string (no quotes); `bytes` is UTF-8 (only ASCII is looked at).
pub(crate) fn write_str_contents(out: &mut Vec<u8>, bytes: &[u8]) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut start = 0;
    loop {
        let at = next_escape(bytes, start);
        out.extend_from_slice(&bytes[start..at]);
        let Some(&byte) = bytes.get(at) else { return };
        match byte {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\t' => out.extend_from_slice(b"\\t"),
            b'\r' => out.extend_from_slice(b"\\r"),
            0x08 => out.extend_from_slice(b"\\b"),
            0x0C => out.extend_from_slice(b"\\f"),
            _ => out.extend_from_slice(&[
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[usize::from(byte >> 4)],
                HEX[usize::from(byte & 0xF)],
            ]),
        }
        start = at + 1;
    }
}

/// `value` as compact JSON appended to `out` (what `serde_json::to_writer(out, value)` writes).
pub(crate) fn to_writer<T: ?Sized + Serialize>(out: &mut Vec<u8>, value: &T) -> Result<(), serde_json::Error> {
    value.serialize(&mut JsonSerializer { out })
}

/// `value` as compact JSON (what `serde_json::to_vec(value)` gives).
pub(crate) fn to_vec<T: ?Sized + Serialize>(value: &T) -> Result<Vec<u8>, serde_json::Error> {
    let mut out = Vec::with_capacity(128);
    to_writer(&mut out, value)?;
    Ok(out)
}

/// A scalar written by `serde_json` itself (numbers: its own digits).
fn by_serde_json<T: ?Sized + Serialize>(out: &mut Vec<u8>, value: &T) -> Result<(), serde_json::Error> {
    serde_json::to_writer(out, value)
}

struct JsonSerializer<'o> {
    out: &'o mut Vec<u8>,
}

/// An array, object or raw value being written; `first`: no element written yet.
struct Compound<'s, 'o> {
    ser: &'s mut JsonSerializer<'o>,
    first: bool,
    /// Closing bytes: `]`, `}`, or `]}` / `}}` for a variant wrapped in an object.
    close: &'static [u8],
    /// A `RawValue`: its one field is the JSON, written as it is.
    raw: bool,
}

impl Compound<'_, '_> {
    fn comma(&mut self) {
        if !self.first {
            self.ser.out.push(b',');
        }
        self.first = false;
    }

    /// A struct's field name and its colon: a Rust name or a serde rename, which needs no escape,
    /// copied without the escape scan (a third of writing a small message).
    fn key(&mut self, key: &'static str) {
        debug_assert!(!key.bytes().any(needs_escape), "a field name to escape: {key}");
        let out = &mut *self.ser.out;
        out.reserve(key.len() + 4);
        if !self.first {
            out.push(b',');
        }
        self.first = false;
        out.push(b'"');
        out.extend_from_slice(key.as_bytes());
        out.extend_from_slice(b"\":");
    }

    fn end(self) {
        self.ser.out.extend_from_slice(self.close);
    }
}

impl<'s, 'o> JsonSerializer<'o> {
    fn open(&'s mut self, open: &[u8], close: &'static [u8]) -> Compound<'s, 'o> {
        self.out.extend_from_slice(open);
        Compound { ser: self, first: true, close, raw: false }
    }

    /// `{"variant":` before a newtype, tuple or struct variant's value.
    fn variant_key(&mut self, variant: &str) {
        self.out.push(b'{');
        write_str(self.out, variant);
        self.out.push(b':');
    }
}

macro_rules! scalars_by_serde_json {
    ($($method:ident: $ty:ty),* $(,)?) => {
        $(fn $method(self, value: $ty) -> Result<(), serde_json::Error> {
            by_serde_json(self.out, &value)
        })*
    };
}

impl<'s, 'o> ser::Serializer for &'s mut JsonSerializer<'o> {
    type Ok = ();
    type Error = serde_json::Error;
    type SerializeSeq = Compound<'s, 'o>;
    type SerializeTuple = Compound<'s, 'o>;
    type SerializeTupleStruct = Compound<'s, 'o>;
    type SerializeTupleVariant = Compound<'s, 'o>;
    type SerializeMap = Compound<'s, 'o>;
    type SerializeStruct = Compound<'s, 'o>;
    type SerializeStructVariant = Compound<'s, 'o>;

    scalars_by_serde_json!(
        serialize_i8: i8, serialize_i16: i16, serialize_i32: i32, serialize_i64: i64, serialize_i128: i128,
        serialize_u8: u8, serialize_u16: u16, serialize_u32: u32, serialize_u64: u64, serialize_u128: u128,
        serialize_f32: f32, serialize_f64: f64,
    );

    fn serialize_bool(self, value: bool) -> Result<(), serde_json::Error> {
        self.out.extend_from_slice(if value { b"true" } else { b"false" });
        Ok(())
    }

    fn serialize_char(self, value: char) -> Result<(), serde_json::Error> {
        write_str(self.out, value.encode_utf8(&mut [0; 4]));
        Ok(())
    }

    fn serialize_str(self, value: &str) -> Result<(), serde_json::Error> {
        write_str(self.out, value);
        Ok(())
    }

    fn serialize_bytes(self, value: &[u8]) -> Result<(), serde_json::Error> {
        by_serde_json(self.out, value)
    }

    fn serialize_none(self) -> Result<(), serde_json::Error> {
        self.serialize_unit()
    }

    fn serialize_some<T: ?Sized + Serialize>(self, value: &T) -> Result<(), serde_json::Error> {
        value.serialize(self)
    }

    fn serialize_unit(self) -> Result<(), serde_json::Error> {
        self.out.extend_from_slice(b"null");
        Ok(())
    }

    fn serialize_unit_struct(self, _name: &'static str) -> Result<(), serde_json::Error> {
        self.serialize_unit()
    }

    fn serialize_unit_variant(self, _: &'static str, _: u32, variant: &'static str) -> Result<(), serde_json::Error> {
        self.serialize_str(variant)
    }

    fn serialize_newtype_struct<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        value: &T,
    ) -> Result<(), serde_json::Error> {
        value.serialize(self)
    }

    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<(), serde_json::Error> {
        self.variant_key(variant);
        value.serialize(&mut *self)?;
        self.out.push(b'}');
        Ok(())
    }

    fn serialize_seq(self, len: Option<usize>) -> Result<Self::SerializeSeq, serde_json::Error> {
        let _ = len;
        Ok(self.open(b"[", b"]"))
    }

    fn serialize_tuple(self, len: usize) -> Result<Self::SerializeTuple, serde_json::Error> {
        self.serialize_seq(Some(len))
    }

    fn serialize_tuple_struct(
        self,
        _: &'static str,
        len: usize,
    ) -> Result<Self::SerializeTupleStruct, serde_json::Error> {
        self.serialize_seq(Some(len))
    }

    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, serde_json::Error> {
        self.variant_key(variant);
        Ok(self.open(b"[", b"]}"))
    }

    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, serde_json::Error> {
        Ok(self.open(b"{", b"}"))
    }

    fn serialize_struct(self, name: &'static str, _: usize) -> Result<Self::SerializeStruct, serde_json::Error> {
        if name == RAW_VALUE_TOKEN {
            return Ok(Compound { ser: self, first: true, close: b"", raw: true });
        }
        Ok(self.open(b"{", b"}"))
    }

    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, serde_json::Error> {
        self.variant_key(variant);
        Ok(self.open(b"{", b"}}"))
    }

    fn collect_str<T: ?Sized + Display>(self, value: &T) -> Result<(), serde_json::Error> {
        self.serialize_str(&value.to_string())
    }
}

impl ser::SerializeSeq for Compound<'_, '_> {
    type Ok = ();
    type Error = serde_json::Error;

    fn serialize_element<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<(), serde_json::Error> {
        self.comma();
        value.serialize(&mut *self.ser)
    }

    fn end(self) -> Result<(), serde_json::Error> {
        Compound::end(self);
        Ok(())
    }
}

impl ser::SerializeTuple for Compound<'_, '_> {
    type Ok = ();
    type Error = serde_json::Error;

    fn serialize_element<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<(), serde_json::Error> {
        ser::SerializeSeq::serialize_element(self, value)
    }

    fn end(self) -> Result<(), serde_json::Error> {
        ser::SerializeSeq::end(self)
    }
}

impl ser::SerializeTupleStruct for Compound<'_, '_> {
    type Ok = ();
    type Error = serde_json::Error;

    fn serialize_field<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<(), serde_json::Error> {
        ser::SerializeSeq::serialize_element(self, value)
    }

    fn end(self) -> Result<(), serde_json::Error> {
        ser::SerializeSeq::end(self)
    }
}

impl ser::SerializeTupleVariant for Compound<'_, '_> {
    type Ok = ();
    type Error = serde_json::Error;

    fn serialize_field<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<(), serde_json::Error> {
        ser::SerializeSeq::serialize_element(self, value)
    }

    fn end(self) -> Result<(), serde_json::Error> {
        ser::SerializeSeq::end(self)
    }
}

impl ser::SerializeMap for Compound<'_, '_> {
    type Ok = ();
    type Error = serde_json::Error;

    fn serialize_key<T: ?Sized + Serialize>(&mut self, key: &T) -> Result<(), serde_json::Error> {
        self.comma();
        key.serialize(MapKey { out: self.ser.out })?;
        self.ser.out.push(b':');
        Ok(())
    }

    fn serialize_value<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<(), serde_json::Error> {
        value.serialize(&mut *self.ser)
    }

    fn end(self) -> Result<(), serde_json::Error> {
        Compound::end(self);
        Ok(())
    }
}

impl ser::SerializeStruct for Compound<'_, '_> {
    type Ok = ();
    type Error = serde_json::Error;

    fn serialize_field<T: ?Sized + Serialize>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), serde_json::Error> {
        if self.raw {
            return value.serialize(RawJson { out: self.ser.out });
        }
        self.key(key);
        value.serialize(&mut *self.ser)
    }

    fn end(self) -> Result<(), serde_json::Error> {
        Compound::end(self);
        Ok(())
    }
}

impl ser::SerializeStructVariant for Compound<'_, '_> {
    type Ok = ();
    type Error = serde_json::Error;

    fn serialize_field<T: ?Sized + Serialize>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), serde_json::Error> {
        ser::SerializeStruct::serialize_field(self, key, value)
    }

    fn end(self) -> Result<(), serde_json::Error> {
        Compound::end(self);
        Ok(())
    }
}

fn key_must_be_a_string() -> serde_json::Error {
    serde_json::Error::custom("key must be a string")
}

/// A map key: strings as they are; integers and booleans quoted (as `serde_json` writes them).
struct MapKey<'o> {
    out: &'o mut Vec<u8>,
}

impl MapKey<'_> {
    fn quoted<T: Serialize>(self, value: T) -> Result<(), serde_json::Error> {
        self.out.push(b'"');
        by_serde_json(self.out, &value)?;
        self.out.push(b'"');
        Ok(())
    }
}

macro_rules! quoted_keys {
    ($($method:ident: $ty:ty),* $(,)?) => {
        $(fn $method(self, value: $ty) -> Result<(), serde_json::Error> {
            self.quoted(value)
        })*
    };
}

impl ser::Serializer for MapKey<'_> {
    type Ok = ();
    type Error = serde_json::Error;
    type SerializeSeq = ser::Impossible<(), serde_json::Error>;
    type SerializeTuple = ser::Impossible<(), serde_json::Error>;
    type SerializeTupleStruct = ser::Impossible<(), serde_json::Error>;
    type SerializeTupleVariant = ser::Impossible<(), serde_json::Error>;
    type SerializeMap = ser::Impossible<(), serde_json::Error>;
    type SerializeStruct = ser::Impossible<(), serde_json::Error>;
    type SerializeStructVariant = ser::Impossible<(), serde_json::Error>;

    quoted_keys!(
        serialize_bool: bool,
        serialize_i8: i8, serialize_i16: i16, serialize_i32: i32, serialize_i64: i64, serialize_i128: i128,
        serialize_u8: u8, serialize_u16: u16, serialize_u32: u32, serialize_u64: u64, serialize_u128: u128,
    );

    fn serialize_f32(self, value: f32) -> Result<(), serde_json::Error> {
        if !value.is_finite() {
            return Err(serde_json::Error::custom("float key must be finite"));
        }
        self.quoted(value)
    }

    fn serialize_f64(self, value: f64) -> Result<(), serde_json::Error> {
        if !value.is_finite() {
            return Err(serde_json::Error::custom("float key must be finite"));
        }
        self.quoted(value)
    }

    fn serialize_char(self, value: char) -> Result<(), serde_json::Error> {
        write_str(self.out, value.encode_utf8(&mut [0; 4]));
        Ok(())
    }

    fn serialize_str(self, value: &str) -> Result<(), serde_json::Error> {
        write_str(self.out, value);
        Ok(())
    }

    fn serialize_bytes(self, _: &[u8]) -> Result<(), serde_json::Error> {
        Err(key_must_be_a_string())
    }

    fn serialize_none(self) -> Result<(), serde_json::Error> {
        Err(key_must_be_a_string())
    }

    fn serialize_some<T: ?Sized + Serialize>(self, _: &T) -> Result<(), serde_json::Error> {
        Err(key_must_be_a_string())
    }

    fn serialize_unit(self) -> Result<(), serde_json::Error> {
        Err(key_must_be_a_string())
    }

    fn serialize_unit_struct(self, _: &'static str) -> Result<(), serde_json::Error> {
        Err(key_must_be_a_string())
    }

    fn serialize_unit_variant(self, _: &'static str, _: u32, variant: &'static str) -> Result<(), serde_json::Error> {
        self.serialize_str(variant)
    }

    fn serialize_newtype_struct<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        value: &T,
    ) -> Result<(), serde_json::Error> {
        value.serialize(self)
    }

    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<(), serde_json::Error> {
        Err(key_must_be_a_string())
    }

    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, serde_json::Error> {
        Err(key_must_be_a_string())
    }

    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, serde_json::Error> {
        Err(key_must_be_a_string())
    }

    fn serialize_tuple_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleStruct, serde_json::Error> {
        Err(key_must_be_a_string())
    }

    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, serde_json::Error> {
        Err(key_must_be_a_string())
    }

    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, serde_json::Error> {
        Err(key_must_be_a_string())
    }

    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeStruct, serde_json::Error> {
        Err(key_must_be_a_string())
    }

    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, serde_json::Error> {
        Err(key_must_be_a_string())
    }

    fn collect_str<T: ?Sized + Display>(self, value: &T) -> Result<(), serde_json::Error> {
        self.serialize_str(&value.to_string())
    }
}

/// The one field of a `RawValue`: its JSON text, written as it is.
struct RawJson<'o> {
    out: &'o mut Vec<u8>,
}

fn expected_raw_json() -> serde_json::Error {
    serde_json::Error::custom("a raw JSON value holds its text")
}

impl ser::Serializer for RawJson<'_> {
    type Ok = ();
    type Error = serde_json::Error;
    type SerializeSeq = ser::Impossible<(), serde_json::Error>;
    type SerializeTuple = ser::Impossible<(), serde_json::Error>;
    type SerializeTupleStruct = ser::Impossible<(), serde_json::Error>;
    type SerializeTupleVariant = ser::Impossible<(), serde_json::Error>;
    type SerializeMap = ser::Impossible<(), serde_json::Error>;
    type SerializeStruct = ser::Impossible<(), serde_json::Error>;
    type SerializeStructVariant = ser::Impossible<(), serde_json::Error>;

    fn serialize_str(self, value: &str) -> Result<(), serde_json::Error> {
        self.out.extend_from_slice(value.as_bytes());
        Ok(())
    }

    fn serialize_bool(self, _: bool) -> Result<(), serde_json::Error> {
        Err(expected_raw_json())
    }
    fn serialize_i64(self, _: i64) -> Result<(), serde_json::Error> {
        Err(expected_raw_json())
    }
    fn serialize_u64(self, _: u64) -> Result<(), serde_json::Error> {
        Err(expected_raw_json())
    }
    fn serialize_i8(self, _: i8) -> Result<(), serde_json::Error> {
        Err(expected_raw_json())
    }
    fn serialize_i16(self, _: i16) -> Result<(), serde_json::Error> {
        Err(expected_raw_json())
    }
    fn serialize_i32(self, _: i32) -> Result<(), serde_json::Error> {
        Err(expected_raw_json())
    }
    fn serialize_u8(self, _: u8) -> Result<(), serde_json::Error> {
        Err(expected_raw_json())
    }
    fn serialize_u16(self, _: u16) -> Result<(), serde_json::Error> {
        Err(expected_raw_json())
    }
    fn serialize_u32(self, _: u32) -> Result<(), serde_json::Error> {
        Err(expected_raw_json())
    }
    fn serialize_f32(self, _: f32) -> Result<(), serde_json::Error> {
        Err(expected_raw_json())
    }
    fn serialize_f64(self, _: f64) -> Result<(), serde_json::Error> {
        Err(expected_raw_json())
    }
    fn serialize_char(self, _: char) -> Result<(), serde_json::Error> {
        Err(expected_raw_json())
    }
    fn serialize_bytes(self, _: &[u8]) -> Result<(), serde_json::Error> {
        Err(expected_raw_json())
    }
    fn serialize_none(self) -> Result<(), serde_json::Error> {
        Err(expected_raw_json())
    }
    fn serialize_some<T: ?Sized + Serialize>(self, _: &T) -> Result<(), serde_json::Error> {
        Err(expected_raw_json())
    }
    fn serialize_unit(self) -> Result<(), serde_json::Error> {
        Err(expected_raw_json())
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<(), serde_json::Error> {
        Err(expected_raw_json())
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, _: &'static str) -> Result<(), serde_json::Error> {
        Err(expected_raw_json())
    }
    fn serialize_newtype_struct<T: ?Sized + Serialize>(self, _: &'static str, _: &T) -> Result<(), serde_json::Error> {
        Err(expected_raw_json())
    }
    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<(), serde_json::Error> {
        Err(expected_raw_json())
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, serde_json::Error> {
        Err(expected_raw_json())
    }
    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, serde_json::Error> {
        Err(expected_raw_json())
    }
    fn serialize_tuple_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleStruct, serde_json::Error> {
        Err(expected_raw_json())
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, serde_json::Error> {
        Err(expected_raw_json())
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, serde_json::Error> {
        Err(expected_raw_json())
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeStruct, serde_json::Error> {
        Err(expected_raw_json())
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, serde_json::Error> {
        Err(expected_raw_json())
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde::Serialize;
    use serde_json::value::RawValue;

    use super::{next_escape, to_vec};

    fn same<T: Serialize + ?Sized>(value: &T) {
        let ours = to_vec(value).expect("writes");
        let theirs = serde_json::to_vec(value).expect("serde_json writes");
        assert_eq!(String::from_utf8_lossy(&ours), String::from_utf8_lossy(&theirs));
    }

    #[test]
    fn every_byte_is_escaped_as_serde_json_does() {
        for byte in 0u8..=0x7F {
            let text = char::from(byte).to_string();
            same(&text);
            // the byte in every position of a block and around its edges
            for at in [0, 1, 7, 31, 32, 33, 63, 64, 70] {
                let mut long = "x".repeat(at);
                long.push(char::from(byte));
                long.push_str(&"y".repeat(40));
                same(&long);
            }
        }
        for text in ["", "é\u{2028}\u{2029}\u{7f}😀", "\"\\\n\t\r\u{8}\u{c}\u{0}\u{1f}", "a\"b\\c", &"ab\n".repeat(50)]
        {
            same(text);
        }
    }

    #[test]
    fn the_scan_agrees_with_a_byte_loop_on_every_byte_value() {
        for byte in 0..=u8::MAX {
            for at in 0..40 {
                for from in [0, 1, 9, 17] {
                    let mut bytes = vec![b'a'; 50];
                    bytes[at] = byte;
                    bytes[at + 3] = 0xC3; // a non-ASCII byte after it never stops the scan
                    let naive = bytes.iter().skip(from).position(|&b| super::needs_escape(b)).map_or(50, |i| i + from);
                    assert_eq!(next_escape(&bytes, from), naive, "byte {byte:#x} at {at} from {from}");
                }
            }
        }
    }

    #[test]
    fn the_scan_finds_the_first_byte_to_escape() {
        let text = format!("{}\"{}", "a".repeat(70), "b".repeat(5));
        assert_eq!(next_escape(text.as_bytes(), 0), 70);
        assert_eq!(next_escape(text.as_bytes(), 71), text.len());
        assert_eq!(next_escape(text.as_bytes(), text.len()), text.len());
        assert_eq!(next_escape(text.as_bytes(), text.len() + 1), text.len());
    }

    #[test]
    fn every_shape_is_written_as_serde_json_writes_it() {
        #[derive(Serialize)]
        enum Shape {
            Unit,
            New(u8),
            Tuple(i8, f64),
            Struct { a: f32, b: Option<String> },
        }
        #[derive(Serialize)]
        struct All<'a> {
            t: bool,
            n: Option<u8>,
            i: i64,
            u: u128,
            f: f64,
            nan: f64,
            c: char,
            bytes: &'a [u8],
            shapes: Vec<Shape>,
            tuple: (u8, &'a str),
            unit: (),
            int_keys: BTreeMap<i32, &'a str>,
            bool_keys: BTreeMap<bool, u8>,
            raw: &'a RawValue,
            value: serde_json::Value,
            empty: Vec<u8>,
        }
        let raw = RawValue::from_string("{ \"kept\" : [1, 2] }".to_owned()).expect("raw");
        let value = serde_json::json!({"a": [1, -2.5, 1e300, null, true, "\u{1}"], "b": {}});
        same(&All {
            t: true,
            n: None,
            i: -7,
            u: u128::MAX,
            f: 0.1,
            nan: f64::NAN,
            c: '"',
            bytes: b"\x00\xff",
            shapes: vec![
                Shape::Unit,
                Shape::New(3),
                Shape::Tuple(-1, 2.5),
                Shape::Struct { a: 1.5, b: Some("x\ny".into()) },
            ],
            tuple: (1, "é"),
            unit: (),
            int_keys: BTreeMap::from([(-1, "a"), (2, "b")]),
            bool_keys: BTreeMap::from([(false, 0), (true, 1)]),
            raw: &raw,
            value,
            empty: vec![],
        });
    }
}

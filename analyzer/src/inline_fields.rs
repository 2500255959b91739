//! Writes the fields of an inner struct as fields of the struct around it: the JSON of
//! `#[serde(flatten)]`, while the outer struct stays a struct for the serializer.
//!
//! Why: serde's flatten serializes the whole outer struct as a map, so every one of its keys,
//! not only the inner struct's, goes through the map-key path (a generic key, checked and escaped
//! as any string). The association and path rows are most of the report; written as maps, their
//! keys were about a sixth of the JSON writing time. Here the outer struct's hand-written
//! `Serialize` passes its `SerializeStruct` to `Inline`, and the inner struct's derived
//! `Serialize` (skips and renames included) writes its fields into it.

use std::fmt::Display;

use serde::ser::{self, Impossible, Serialize, SerializeStruct, Serializer};

/// A serializer that accepts one struct and writes its fields into the enclosing struct `S`.
pub struct Inline<'a, S>(pub &'a mut S);

/// Anything but a struct cannot be inlined.
fn not_a_struct<E: ser::Error>(what: impl Display) -> E {
    E::custom(format_args!("inline_fields: {what} is not a struct"))
}

/// Serializer methods that refuse their value: `name(args) -> return type`.
macro_rules! refuse {
    ($($name:ident($($arg:ty),*) -> $ret:ty;)*) => {
        $(
            fn $name(self, $(_: $arg),*) -> Result<$ret, Self::Error> {
                Err(not_a_struct(stringify!($name)))
            }
        )*
    };
}

impl<'a, S: SerializeStruct> Serializer for Inline<'a, S> {
    type Ok = ();
    type Error = S::Error;
    type SerializeSeq = Impossible<(), S::Error>;
    type SerializeTuple = Impossible<(), S::Error>;
    type SerializeTupleStruct = Impossible<(), S::Error>;
    type SerializeTupleVariant = Impossible<(), S::Error>;
    type SerializeMap = Impossible<(), S::Error>;
    type SerializeStruct = Self;
    type SerializeStructVariant = Impossible<(), S::Error>;

    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self, S::Error> {
        Ok(self)
    }

    refuse! {
        serialize_bool(bool) -> ();
        serialize_i8(i8) -> ();
        serialize_i16(i16) -> ();
        serialize_i32(i32) -> ();
        serialize_i64(i64) -> ();
        serialize_u8(u8) -> ();
        serialize_u16(u16) -> ();
        serialize_u32(u32) -> ();
        serialize_u64(u64) -> ();
        serialize_f32(f32) -> ();
        serialize_f64(f64) -> ();
        serialize_char(char) -> ();
        serialize_str(&str) -> ();
        serialize_bytes(&[u8]) -> ();
        serialize_none() -> ();
        serialize_unit() -> ();
        serialize_unit_struct(&'static str) -> ();
        serialize_unit_variant(&'static str, u32, &'static str) -> ();
        serialize_seq(Option<usize>) -> Self::SerializeSeq;
        serialize_tuple(usize) -> Self::SerializeTuple;
        serialize_tuple_struct(&'static str, usize) -> Self::SerializeTupleStruct;
        serialize_tuple_variant(&'static str, u32, &'static str, usize)
            -> Self::SerializeTupleVariant;
        serialize_map(Option<usize>) -> Self::SerializeMap;
        serialize_struct_variant(&'static str, u32, &'static str, usize)
            -> Self::SerializeStructVariant;
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), S::Error> {
        value.serialize(self)
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        value: &T,
    ) -> Result<(), S::Error> {
        value.serialize(self)
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<(), S::Error> {
        Err(not_a_struct("an enum variant"))
    }
}

impl<S: SerializeStruct> SerializeStruct for Inline<'_, S> {
    type Ok = ();
    type Error = S::Error;

    #[inline]
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), S::Error> {
        self.0.serialize_field(key, value)
    }

    fn skip_field(&mut self, key: &'static str) -> Result<(), S::Error> {
        self.0.skip_field(key)
    }

    fn end(self) -> Result<(), S::Error> {
        Ok(())
    }
}

/// Writes the fields of `inner` into `outer` (the JSON of `#[serde(flatten)]`).
#[inline]
pub fn inline<S, T>(outer: &mut S, inner: &T) -> Result<(), S::Error>
where
    S: SerializeStruct,
    T: Serialize + ?Sized,
{
    inner.serialize(Inline(outer))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Serialize;

    #[derive(Serialize)]
    struct Inner {
        a: u32,
        #[serde(skip_serializing_if = "Option::is_none")]
        b: Option<u32>,
        #[serde(rename = "c_renamed")]
        c: &'static str,
    }

    #[derive(Serialize)]
    struct Flattened {
        x: u32,
        #[serde(flatten)]
        inner: Inner,
        #[serde(flatten)]
        boxed: Box<Inner>,
        y: bool,
    }

    struct Inlined<'a>(&'a Flattened);

    impl Serialize for Inlined<'_> {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            let f = self.0;
            let mut st = s.serialize_struct("Inlined", 2)?;
            st.serialize_field("x", &f.x)?;
            let mut sub = Inline(&mut st);
            // Through a reference and a box, as the reports hold them.
            Serialize::serialize(&&f.inner, Inline(&mut sub))?;
            inline(&mut st, &f.boxed)?;
            st.serialize_field("y", &f.y)?;
            st.end()
        }
    }

    #[test]
    fn same_json_as_serde_flatten() {
        for b in [None, Some(7)] {
            let f = Flattened {
                x: 1,
                inner: Inner { a: 2, b, c: "q\"t" },
                boxed: Box::new(Inner {
                    a: 3,
                    b: None,
                    c: "",
                }),
                y: true,
            };
            let want = serde_json::to_string(&f).unwrap();
            assert_eq!(serde_json::to_string(&Inlined(&f)).unwrap(), want);
            let ours = crate::json_write::to_vec(&Inlined(&f)).unwrap();
            assert_eq!(String::from_utf8(ours).unwrap(), want);
        }
    }

    #[test]
    fn refuses_what_is_not_a_struct() {
        struct Bad;
        impl Serialize for Bad {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let mut st = s.serialize_struct("Bad", 1)?;
                inline(&mut st, &5u32)?;
                st.end()
            }
        }
        let err = serde_json::to_string(&Bad).unwrap_err().to_string();
        assert!(err.contains("not a struct"), "{err}");
    }
}

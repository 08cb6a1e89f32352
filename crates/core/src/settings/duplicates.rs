//! A key written twice in one JSON object: JSON parsers keep the last one, so an earlier
//! `"tools": {"exclude": [...]}` would silently not apply. Settings files refuse it.

use std::collections::HashSet;
use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

/// Walks any JSON value and fails on the first object with a repeated key.
struct NoDuplicates;

impl<'de> Deserialize<'de> for NoDuplicates {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(Walk)
    }
}

struct Walk;

impl<'de> Visitor<'de> for Walk {
    type Value = NoDuplicates;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<NoDuplicates, A::Error> {
        let mut seen = HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            if !seen.insert(key.clone()) {
                return Err(de::Error::custom(format!(
                    "the key \"{key}\" appears twice in one object (only the last would count)"
                )));
            }
            map.next_value::<NoDuplicates>()?;
        }
        Ok(NoDuplicates)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<NoDuplicates, A::Error> {
        while seq.next_element::<NoDuplicates>()?.is_some() {}
        Ok(NoDuplicates)
    }

    fn visit_bool<E>(self, _: bool) -> Result<NoDuplicates, E> {
        Ok(NoDuplicates)
    }
    fn visit_i64<E>(self, _: i64) -> Result<NoDuplicates, E> {
        Ok(NoDuplicates)
    }
    fn visit_u64<E>(self, _: u64) -> Result<NoDuplicates, E> {
        Ok(NoDuplicates)
    }
    fn visit_f64<E>(self, _: f64) -> Result<NoDuplicates, E> {
        Ok(NoDuplicates)
    }
    fn visit_str<E>(self, _: &str) -> Result<NoDuplicates, E> {
        Ok(NoDuplicates)
    }
    fn visit_unit<E>(self) -> Result<NoDuplicates, E> {
        Ok(NoDuplicates)
    }
    fn visit_none<E>(self) -> Result<NoDuplicates, E> {
        Ok(NoDuplicates)
    }
}

/// The first repeated key in `text` (JSON), with its line.
pub(super) fn first_duplicate(text: &str) -> Option<(usize, String)> {
    match serde_json::from_str::<NoDuplicates>(text) {
        Err(e) if e.is_data() => Some((e.line(), e.to_string())),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn finds_a_key_written_twice() {
        let (line, msg) =
            super::first_duplicate("{\"tools\": {\"exclude\": [\"x\"]},\n \"tools\": {}}").unwrap();
        assert_eq!(line, 2);
        assert!(msg.contains("\"tools\" appears twice"), "{msg}");
        assert!(super::first_duplicate(r#"{"a": {"b": 1}, "c": {"b": [1, {"b": 2}]}}"#).is_none());
    }
}

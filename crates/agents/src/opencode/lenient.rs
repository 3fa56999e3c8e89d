//! Reading a wire field leniently: a field of an unexpected JSON type reads as absent, so one
//! odd field never makes a whole line unreadable and an adapter never fails on a new version's
//! small changes.

use serde::de::{Deserialize, DeserializeOwned, Deserializer};
use serde_json::Value;

/// A field that reads as `None` when it is missing, `null`, a list, or of a type `T` cannot be
/// read from. No field ganger reads from OpenCode is a list, and refusing lists keeps serde from
/// reading a struct out of one by position.
#[derive(Debug, Clone, PartialEq)]
pub struct Lenient<T>(pub Option<T>);

impl<T> Default for Lenient<T> {
    fn default() -> Self {
        Lenient(None)
    }
}

impl<T> Lenient<T> {
    /// The value, when it was present and readable.
    pub fn get(&self) -> Option<&T> {
        self.0.as_ref()
    }

    /// The value, when it was present and readable.
    pub fn into_inner(self) -> Option<T> {
        self.0
    }
}

impl<'de, T: DeserializeOwned> Deserialize<'de> for Lenient<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        if value.is_array() {
            return Ok(Lenient(None));
        }
        Ok(Lenient(T::deserialize(value).ok()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq, serde::Deserialize)]
    struct Pair {
        #[serde(default)]
        a: Lenient<u64>,
        #[serde(default)]
        b: Lenient<String>,
    }

    fn read(json: &str) -> Lenient<Pair> {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn odd_fields_read_as_absent_and_lists_never_fill_a_struct() {
        let pair = |a: Option<u64>, b: Option<&str>| {
            Lenient(Some(Pair {
                a: Lenient(a),
                b: Lenient(b.map(str::to_owned)),
            }))
        };
        assert_eq!(read(r#"{"a":1,"b":"x"}"#), pair(Some(1), Some("x")));
        assert_eq!(read(r#"{"a":-1,"b":2}"#), pair(None, None));
        assert_eq!(read(r#"{"a":1.5,"b":null,"c":[]}"#), pair(None, None));
        assert_eq!(read(r#"{}"#), pair(None, None));
        assert_eq!(read(r#"[1,"x"]"#), Lenient(None));
        assert_eq!(read(r#""text""#), Lenient(None));
    }
}

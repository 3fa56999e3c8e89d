//! A word of `ganger.toml` that names one of ganger's settings (a sandbox, a network, a role's
//! permission), read into its value with the file. A word that names none is kept with why,
//! and said where the setting is used, so that a command that never uses it runs as before.

use serde::{Deserialize, Deserializer};
use std::str::FromStr;

/// A setting's word as the file has it, and what it reads as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Setting<T> {
    text: String,
    value: Result<T, String>,
}

impl<T: Copy + ToString> Setting<T> {
    /// The setting `value`, as a default.
    pub fn of(value: T) -> Setting<T> {
        Setting {
            text: value.to_string(),
            value: Ok(value),
        }
    }

    /// The value, or why the word names none.
    pub fn value(&self) -> Result<T, &str> {
        self.value.as_ref().copied().map_err(String::as_str)
    }

    /// The word as the file has it.
    pub fn text(&self) -> &str {
        &self.text
    }
}

impl<'de, T: FromStr<Err = String>> Deserialize<'de> for Setting<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Ok(Setting {
            value: text.parse(),
            text,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ganger_events::SandboxKind;

    #[test]
    fn a_word_reads_as_its_value_or_keeps_why_it_does_not() {
        let read = |text: &str| -> Setting<SandboxKind> {
            Setting::deserialize(toml::Value::String(text.into())).unwrap()
        };
        assert_eq!(read("bwrap").value(), Ok(SandboxKind::Bwrap));
        assert_eq!(read("bwrap"), Setting::of(SandboxKind::Bwrap));
        let misspelt = read("bwarp");
        assert_eq!(misspelt.text(), "bwarp");
        assert!(
            misspelt
                .value()
                .unwrap_err()
                .contains("unknown sandbox \"bwarp\"")
        );
    }
}

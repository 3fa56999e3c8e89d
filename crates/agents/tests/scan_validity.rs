//! The scanner judges a line exactly as `serde_json` does when it decides at all: on arbitrary
//! bytes, on token soup close to JSON, and on JSON that `serde_json` itself printed.
#![cfg(test)]

use ganger_agents::scan::{self, Scan};
use proptest::prelude::*;
use serde_json::Value;

fn serde_accepts(bytes: &[u8]) -> bool {
    serde_json::from_slice::<Value>(bytes).is_ok()
}

/// Asserts agreement; returns whether the scanner decided.
fn agrees(bytes: &[u8]) -> bool {
    let serde = serde_accepts(bytes);
    match scan::validate(bytes) {
        Scan::Valid(()) => {
            assert!(serde, "scanner: valid, serde_json: invalid");
            true
        }
        Scan::Invalid => {
            assert!(!serde, "scanner: invalid, serde_json: valid");
            true
        }
        Scan::Unsure => false,
    }
}

/// Pieces of JSON and near-JSON, valid and not.
const TOKENS: &[&str] = &[
    "{",
    "}",
    "[",
    "]",
    ":",
    ",",
    "\"",
    "\\",
    "\"a\"",
    "\"type\"",
    "\"tool_use\"",
    "0",
    "1",
    "7",
    "-",
    ".",
    "e",
    "E",
    "+",
    "12.5",
    "1e400",
    "1e-400",
    "-0",
    "01",
    "true",
    "false",
    "null",
    "tru",
    "nul",
    " ",
    "\t",
    "\r",
    "\n",
    "\u{c}",
    "\\u00e9",
    "\\ud800",
    "\\udc00",
    "\\ud83d\\ude00",
    "\\uZZZZ",
    "\\n",
    "\\x",
    "é",
    "東",
    "😀",
    "\u{7f}",
    "\u{1}",
    "\u{1f}",
];

fn soup() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(prop::sample::select(TOKENS), 0..24)
        .prop_map(|tokens| tokens.concat().into_bytes())
}

/// Soup inside a string or an object, where most of the interesting string rules apply.
fn framed_soup() -> impl Strategy<Value = Vec<u8>> {
    (soup(), 0..3u8).prop_map(|(inner, frame)| {
        let inner = String::from_utf8(inner).unwrap_or_default();
        match frame {
            0 => format!("\"{inner}\""),
            1 => format!("{{\"k\":\"{inner}\"}}"),
            _ => format!("[{inner}]"),
        }
        .into_bytes()
    })
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |x| x.is_finite())
            .prop_map(Value::from),
        any::<String>().prop_map(Value::String),
    ];
    leaf.prop_recursive(6, 64, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..8).prop_map(Value::Array),
            prop::collection::btree_map(any::<String>(), inner, 0..8)
                .prop_map(|map| Value::Object(map.into_iter().collect())),
        ]
    })
}

/// What `serde_json` printed, compact or pretty, possibly damaged by one byte.
fn printed_json() -> impl Strategy<Value = Vec<u8>> {
    (
        json_value(),
        any::<bool>(),
        any::<prop::sample::Index>(),
        any::<u8>(),
        0..4u8,
    )
        .prop_map(|(value, pretty, at, byte, how)| {
            let mut bytes = if pretty {
                serde_json::to_vec_pretty(&value)
            } else {
                serde_json::to_vec(&value)
            }
            .unwrap();
            let at = at.index(bytes.len());
            match how {
                0 => bytes[at] = byte,
                1 => bytes.truncate(at),
                _ => {}
            }
            bytes
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(5000))]

    #[test]
    fn agrees_on_arbitrary_bytes(bytes in prop::collection::vec(any::<u8>(), 0..48)) {
        agrees(&bytes);
    }

    #[test]
    fn agrees_on_token_soup(bytes in soup()) {
        agrees(&bytes);
    }

    #[test]
    fn agrees_on_framed_soup(bytes in framed_soup()) {
        agrees(&bytes);
    }

    #[test]
    fn agrees_on_printed_json(bytes in printed_json()) {
        agrees(&bytes);
    }
}

#[test]
fn printed_json_is_mostly_decided() {
    // The agreement tests would pass if the scanner never decided; this one would not.
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let strategy = printed_json();
    let mut decided = 0;
    for _ in 0..2000 {
        let bytes =
            proptest::strategy::ValueTree::current(&strategy.new_tree(&mut runner).unwrap());
        if agrees(&bytes) {
            decided += 1;
        }
    }
    assert!(decided > 1800, "only {decided} of 2000 decided");
}

#[test]
fn known_lines_are_judged_as_serde_json_judges_them() {
    let valid: [&[u8]; 10] = [
        b"{}",
        b" [ 1 , -0 , 0.5e-3 , 1E+2 , true , null ] ",
        br#"{"a":{"b":[{"c":"\u00e9\ud83d\ude00\n\/"}]}}"#,
        br#"{"type":"x","type":"y"}"#,
        "\"déjà 東京 😀\u{7f}\"".as_bytes(),
        b"\t{\r\n\"k\"\t:\r\n1}\n",
        b"1e-400",
        b"18446744073709551616",
        b"123",
        b"\"\"",
    ];
    for bytes in valid {
        assert_eq!(
            scan::validate(bytes),
            Scan::Valid(()),
            "{}",
            String::from_utf8_lossy(bytes)
        );
    }
    let invalid: [&[u8]; 16] = [
        b"",
        b"   ",
        b"{",
        b"{\"a\"}",
        b"{\"a\":1,}",
        b"[1,]",
        b"[01]",
        b"1.",
        b"-",
        b"tru",
        b"\"a\x01b\"",
        b"\"\\x\"",
        b"\"\\u12G4\"",
        b"\"\xff\"",
        b"{} {}",
        b"{}\x0c",
    ];
    for bytes in invalid {
        assert_eq!(
            scan::validate(bytes),
            Scan::Invalid,
            "{}",
            String::from_utf8_lossy(bytes)
        );
        assert!(!serde_accepts(bytes));
    }
    let unsure: [&[u8]; 4] = [b"1e400", b"\"\\ud800\"", b"\"\\udc00\"", b"1e308"];
    for bytes in unsure {
        assert_eq!(
            scan::validate(bytes),
            Scan::Unsure,
            "{}",
            String::from_utf8_lossy(bytes)
        );
    }
}

//! Mutations: a stream is a few seed lines, each possibly mutated as bytes or as a JSON value,
//! with lines of other streams spliced in and now and then a line cut short or left without
//! its newline.

use crate::rng::Rng;
use serde_json::Value;

/// Tokens that parsers tend to trip over.
const TOKENS: [&str; 22] = [
    "\"",
    "\\",
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    "null",
    "true",
    "-1",
    "1e999",
    "-0",
    "1.5e308",
    "18446744073709551616",
    "\\u0000",
    "\\ud800",
    "\u{feff}",
    "\r",
    "\"type\"",
    "\t",
    "\u{10ffff}",
];

/// Values a JSON node may be replaced with.
fn odd_value(rng: &mut Rng) -> Value {
    match rng.below(10) {
        0 => Value::Null,
        1 => Value::Bool(rng.one_in(2)),
        2 => serde_json::json!(-1),
        3 => serde_json::json!(u64::MAX),
        4 => serde_json::json!(1e300),
        5 => Value::String(String::new()),
        6 => Value::String("é\u{0}\u{ffff}[API Error: {\"code\":401}]".into()),
        7 => Value::String("x".repeat(rng.below(5000))),
        8 => serde_json::json!([]),
        _ => serde_json::json!({}),
    }
}

/// Replaces, removes or retypes one node of `value`.
fn mutate_value(rng: &mut Rng, value: &mut Value, depth: usize) {
    match value {
        Value::Object(map) if !map.is_empty() && depth < 8 => {
            let keys: Vec<String> = map.keys().cloned().collect();
            let key = &keys[rng.below(keys.len())];
            match rng.below(6) {
                0 => {
                    map.remove(key);
                }
                1 => {
                    map.insert(key.clone(), odd_value(rng));
                }
                _ => {
                    if let Some(inner) = map.get_mut(key) {
                        mutate_value(rng, inner, depth + 1);
                    }
                }
            }
        }
        Value::Array(items) if !items.is_empty() && depth < 8 => {
            let index = rng.below(items.len());
            if rng.one_in(4) {
                items.remove(index);
            } else {
                mutate_value(rng, &mut items[index], depth + 1);
            }
        }
        _ => *value = odd_value(rng),
    }
}

fn mutate_bytes(rng: &mut Rng, line: &mut Vec<u8>) {
    for _ in 0..=rng.below(4) {
        let at = if line.is_empty() {
            0
        } else {
            rng.below(line.len() + 1)
        };
        match rng.below(6) {
            0 if !line.is_empty() => {
                let i = at.min(line.len() - 1);
                line[i] ^= 1 << rng.below(8);
            }
            1 => line.insert(at, (rng.next() & 0xff) as u8),
            2 if !line.is_empty() => {
                let end = (at + rng.below(16)).min(line.len());
                line.drain(at.min(end)..end);
            }
            3 => {
                let token = TOKENS[rng.below(TOKENS.len())].as_bytes();
                line.splice(at..at, token.iter().copied());
            }
            4 if !line.is_empty() => {
                let end = (at + rng.below(64)).min(line.len());
                let copy = line[at.min(end)..end].to_vec();
                line.splice(at..at, copy);
            }
            _ => line.truncate(at),
        }
    }
}

/// One stream of a few lines from the corpus, mutated.
pub fn stream(rng: &mut Rng, corpus: &[Vec<u8>]) -> Vec<u8> {
    let count = 1 + rng.below(12);
    let start = rng.below(corpus.len());
    let mut out = Vec::new();
    for i in 0..count {
        // Mostly consecutive seed lines (real order), sometimes any line.
        let index = if rng.one_in(4) {
            rng.below(corpus.len())
        } else {
            (start + i) % corpus.len()
        };
        let mut line = corpus[index].clone();
        match rng.below(4) {
            0 => {}
            1 => mutate_bytes(rng, &mut line),
            _ => {
                if let Ok(mut value) = serde_json::from_slice::<Value>(&line) {
                    mutate_value(rng, &mut value, 0);
                    line = serde_json::to_vec(&value).unwrap_or(line);
                } else {
                    mutate_bytes(rng, &mut line);
                }
            }
        }
        out.extend_from_slice(&line);
        if !(i + 1 == count && rng.one_in(3)) {
            out.extend_from_slice(if rng.one_in(10) { b"\r\n" } else { b"\n" });
        }
    }
    out
}

//! A fast, exact JSON line scanner for the summary path.
//!
//! Agents print tens of thousands of lines per round, nearly all of them boring (a tool call
//! that completed). Building a `serde_json::Value` for each costs more than the summary is
//! worth, so [`scan_fields`] (or [`scan_fields_into`], on a hot path) validates a line in one pass
//! and lends out the few fields a caller asked for, as slices of the line, without allocating.
//!
//! The scanner never guesses. Its answer is [`Scan::Valid`] only when `serde_json` would accept
//! the line as a `serde_json::Value` and the captured fields are exactly what that value holds,
//! [`Scan::Invalid`] only when `serde_json` would reject it, and [`Scan::Unsure`] whenever it
//! cannot prove either cheaply: escaped or duplicated keys where fields are tracked, numbers
//! that could be out of `f64` range, lone surrogate escapes, nesting deeper than
//! [`MAX_DEPTH`]. A caller treats `Unsure` by running the full parse; tests hold the scanner to
//! `serde_json` on fixtures, mutations and arbitrary bytes.
//!
//! [`stream_lines`], [`LineCutter`] and [`line_content`] cut a stream into the lines parsers
//! see, the same way for a live round and a finished file, with a cap on a line's length
//! ([`MAX_LINE`]).

mod fields;
mod lines;
mod number;
mod scanner;
mod string;

pub use fields::{Field, FieldTable, Kind, Raw, Scan};
pub use lines::{Line, LineCutter, MAX_LINE, line_content, lines, stream_lines};
pub use scanner::{MAX_DEPTH, scan_fields, scan_fields_into, validate};

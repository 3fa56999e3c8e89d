//! What the OpenCode tests share: the recorded fixture streams, a generator of big streams, and
//! the check that the fast summary path equals the full parse.
#![cfg(test)]
#![allow(
    dead_code,
    reason = "each test module uses its own part of this module"
)]

pub mod recorded;

use ganger_agents::opencode::OpenCodeStream;
use ganger_agents::{Feed, StreamParser};
use ganger_events::RoundSummary;
use std::path::PathBuf;

/// The recorded OpenCode streams, by file name, in name order.
pub fn fixtures() -> Vec<(String, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/opencode");
    let mut found: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "jsonl"))
        .map(|path| {
            let name = path.file_stem().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&path).unwrap())
        })
        .collect();
    found.sort();
    assert!(found.len() >= 10, "fixtures missing in {}", dir.display());
    found
}

/// The full parse's effect on a summary, as the `StreamParser` contract defines it.
pub fn full_feed(line: &[u8], summary: &mut RoundSummary) -> Feed {
    let parsed = OpenCodeStream.parse_line(line);
    parsed.fold_into(summary);
    Feed {
        progress: parsed.is_progress(),
    }
}

/// Feeds `line` both ways into copies of `summary` and asserts the results are equal; returns
/// the summary after the line.
pub fn assert_feed_equal(line: &[u8], summary: &RoundSummary) -> RoundSummary {
    let mut fast = summary.clone();
    let mut full = summary.clone();
    let fast_feed = OpenCodeStream.feed(line, &mut fast);
    let full_feed = full_feed(line, &mut full);
    assert_eq!(
        (fast_feed, &fast),
        (full_feed, &full),
        "fast and full paths differ on line {:?}",
        String::from_utf8_lossy(line)
    );
    fast
}

/// A small deterministic pseudo-random sequence (no dependency needed for test data).
pub struct Lcg(u64);

impl Lcg {
    pub fn new(seed: u64) -> Lcg {
        Lcg(seed)
    }

    pub fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// A stream of about `size` bytes shaped like a long OpenCode run: mostly completed tool calls
/// (as the seed's fake launcher prints with `FAKE_EVENTS`), with steps, text, failed tool calls,
/// escapes and non-ASCII text mixed in.
pub fn big_stream(size: usize) -> Vec<u8> {
    let session = "ses_6b0ce744X2OqZEGsrErqB7Xerz";
    let mut random = Lcg::new(7);
    let mut out = Vec::with_capacity(size + 4096);
    let mut n = 0u64;
    let mut time = 1_796_007_748_265u64;
    while out.len() < size {
        n += 1;
        time += random.below(3);
        let head = format!(
            r#"{{"type":"{{}}","timestamp":{time},"sessionID":"{session}","part":{{"id":"prt_extra{n:08}","sessionID":"{session}","messageID":"msg_1KUV9QKWmP6jWKODgHGBALF5","#
        );
        let line = match random.below(100) {
            0 => {
                head.replace("{}", "step_finish")
                    + r#""type":"step-finish","reason":"tool-calls","cost":0.0012,"tokens":{"input":1200,"output":80,"reasoning":0,"cache":{"read":0,"write":0}}}}"#
            }
            1 => head.replace("{}", "step_start") + r#""type":"step-start"}}"#,
            2 => {
                head.replace("{}", "text")
                    + r#""type":"text","text":"Done \"step\".\nNext: caf\u00e9 — déjà vu","time":{"start":1,"end":2}}}"#
            }
            3 => {
                head.replace("{}", "tool_use")
                    + r#""type":"tool","callID":"call_x","tool":"bash","state":{"status":"error","input":{"command":"false"},"error":"Command failed with exit 1","time":{"start":1,"end":2}}}}"#
            }
            4 => {
                head.replace("{}", "tool_use")
                    + &format!(
                        r#""type":"tool","callID":"call_extra{n:08}","tool":"read","state":{{"status":"completed","input":{{"filePath":"/src/ma\u00efn.rs"}},"output":"line 1\n\tline 2 \"quoted\" — ünïcödé\n","metadata":{{"exit":0,"truncated":false,"nested":[1,2.5,-3e-2,null,true]}},"title":"src/main.rs","time":{{"start":{time},"end":{time}}}}}}}}}"#
                    )
            }
            _ => {
                head.replace("{}", "tool_use")
                    + &format!(
                        r#""type":"tool","callID":"call_extra{n:08}","tool":"read","state":{{"status":"completed","input":{{"filePath":"/tmp/tmp.ft4q7pEPID/site/container/src/fake-worker.txt"}},"output":"extra event {n}","time":{{"start":{time},"end":{time}}}}}}}}}"#
                    )
            }
        };
        out.extend_from_slice(line.as_bytes());
        out.push(b'\n');
    }
    out.extend_from_slice(
        format!(r#"{{"type":"step_finish","timestamp":{time},"sessionID":"{session}","part":{{"type":"step-finish","reason":"stop","cost":0.0003,"tokens":{{"input":1500,"output":25,"reasoning":0,"cache":{{"read":1024,"write":0}}}}}}}}"#)
            .as_bytes(),
    );
    out.push(b'\n');
    out
}

/// A stream of about `size` bytes shaped like real work: steps of a few tool calls whose
/// outputs are files and command output of a few kilobytes (with the escapes JSON needs),
/// each step ending with its text and `step_finish`.
pub fn work_stream(size: usize) -> Vec<u8> {
    let session = "ses_dd5db5510ffegQyKejQN46iKaz";
    let mut random = Lcg::new(11);
    let mut out = Vec::with_capacity(size + 65536);
    let mut n = 0u64;
    while out.len() < size {
        n += 1;
        out.extend_from_slice(format!(r#"{{"type":"step_start","timestamp":1796003380321,"sessionID":"{session}","part":{{"id":"prt_{n:024}","messageID":"msg_22a24b533001YhIZTGoRjoc7Lm","sessionID":"{session}","snapshot":"c56e4064a7c225fad594e1fe14dd0994eeb70b30","type":"step-start"}}}}"#).as_bytes());
        out.push(b'\n');
        for call in 0..=random.below(4) {
            let lines = 20 + random.below(200);
            let mut output = String::new();
            for line in 0..lines {
                output.push_str(&format!("{line:>5}\\t    let value = compute(\\\"item {line}\\\", &config)?; // step {n}\\n"));
            }
            out.extend_from_slice(format!(r#"{{"type":"tool_use","timestamp":1796003380321,"sessionID":"{session}","part":{{"type":"tool","tool":"read","callID":"call_{n}_{call}","state":{{"status":"completed","input":{{"filePath":"/home/dev/project/src/module_{call}.rs"}},"output":"<file>\\n{output}</file>","metadata":{{"preview":"fn main() {{}}","truncated":false}},"title":"src/module_{call}.rs","time":{{"start":1796003380265,"end":1796003380299}}}},"id":"prt_{n:024}","sessionID":"{session}","messageID":"msg_22a24b533001YhIZTGoRjoc7Lm"}}}}"#).as_bytes());
            out.push(b'\n');
        }
        out.extend_from_slice(format!(r#"{{"type":"step_finish","timestamp":1796003380556,"sessionID":"{session}","part":{{"id":"prt_{n:024}","reason":"tool-calls","snapshot":"1d8a676e8cc8c9b1ab7e3bbce3dd5c9f9f6df6cd","messageID":"msg_22a24b533001YhIZTGoRjoc7Lm","sessionID":"{session}","type":"step-finish","tokens":{{"total":1040,"input":1020,"output":20,"reasoning":0,"cache":{{"write":0,"read":0}}}},"cost":0.00336}}}}"#).as_bytes());
        out.push(b'\n');
        out.extend_from_slice(format!(r#"{{"type":"text","timestamp":1796003381056,"sessionID":"{session}","part":{{"id":"prt_{n:024}","messageID":"msg_22a24bda1001Q0zMYbvAFYLiX4","sessionID":"{session}","type":"text","text":"Step {n}: read the modules and found the \"config\" handling.\nNext I will change it.","time":{{"start":1796003381036,"end":1796003381044}}}}}}"#).as_bytes());
        out.push(b'\n');
    }
    out
}

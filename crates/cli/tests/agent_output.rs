//! What an agent (or a check) prints, treated as hostile: a key it prints is removed from
//! everything ganger writes and prints, whether it came plain, JSON-escaped, split over two
//! events or through a check; a line of any length leaves the host's memory bounded; terminal
//! controls never reach the terminal. The agents are `command` agents running shell scripts.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]

use ganger_test_support::{Run, World, wait_until};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

/// The key every test hands to its agent (it starts with `s`, which the scripts escape).
const SECRET: &str = "sk-test-7d41c0e2-output-safety";

fn world() -> World {
    World::new(env!("CARGO_BIN_EXE_ganger").as_ref())
}

/// Writes `script` as the `command` agent, reading its stream as `format`.
fn use_script(world: &World, format: &str, script: &str) {
    let path = world.root().join(format!("agent-{format}.sh"));
    std::fs::write(&path, script).unwrap();
    world.write(
        "ganger.toml",
        &format!(
            "[defaults]\nagent = \"command\"\n\n[agents.command]\nargv = [\"/bin/sh\", {}]\nformat = \"{format}\"\n",
            serde_json::to_string(&path.to_string_lossy()).unwrap()
        ),
    );
}

/// A key file holding [`SECRET`], as a `--key` argument.
fn key_arg(world: &World) -> String {
    let file = world.root().join("mock.key");
    std::fs::write(&file, format!("{SECRET}\n")).unwrap();
    format!("mock={}", file.display())
}

/// Panics if the key is in anything ganger wrote under `.ganger/` or in any of `outputs`.
#[track_caller]
fn assert_key_nowhere(world: &World, outputs: &[&Run]) {
    for (path, bytes) in world.everything_written() {
        let text = String::from_utf8_lossy(&bytes);
        assert!(!text.contains(SECRET), "the key is in {}", path.display());
    }
    for run in outputs {
        assert!(
            !run.stdout.contains(SECRET) && !run.stderr.contains(SECRET),
            "the key was printed:\n{}\n{}",
            run.stdout,
            run.stderr
        );
    }
}

fn round_file(world: &World, slug: &str, name: &str) -> PathBuf {
    world.repo.join(format!(".ganger/tasks/{slug}/{name}"))
}

#[test]
fn a_check_that_prints_the_key_leaves_it_nowhere() {
    let world = world();
    use_script(
        &world,
        "text",
        "cat > /dev/null; echo \"k=$MOCK_API_KEY\" > leaked.txt; echo DONE: ok\n",
    );
    let key = key_arg(&world);
    // The check prints the key whole, then again in two writes a moment apart, so that the
    // host reads it in two pieces.
    let check = "cat leaked.txt; k=$(cut -c3- leaked.txt); head=${k%??????????}; \
                 printf 'again=%s' \"$head\"; sleep 0.3; printf '%s\\n' \"${k#\"$head\"}\"; exit 1";
    let run = world.ganger(&[
        "start",
        "leak",
        "--message",
        "hi",
        "--key",
        &key,
        "--check",
        check,
        "--json",
    ]);
    run.expect_code(1);
    let report = run.json();
    assert_eq!(
        report["reason"],
        "the agent said it was done, but checks failed: check (exit 1)"
    );
    let log =
        std::fs::read_to_string(round_file(&world, "leak", "round-1.check-check.log")).unwrap();
    assert_eq!(log, "k=[redacted:mock]\nagain=[redacted:mock]\n");
    let status = world.ganger(&["status", "leak", "--json"]);
    assert_eq!(
        status.json()["checks"][0]["tail"],
        "k=[redacted:mock]\nagain=[redacted:mock]"
    );
    let human = world.ganger(&["status", "leak"]);
    assert_key_nowhere(&world, &[&run, &status, &human]);
}

/// A line of Claude Code's stream, with `text` inserted as is (escapes and all).
fn claude_result(text: &str, is_error: bool) -> String {
    format!(
        "{{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":{is_error},\"result\":\"{text}\",\"session_id\":\"0d54be32-b686-4109-b4c6-7b2b846a9fd4\",\"usage\":{{\"input_tokens\":1,\"output_tokens\":1}}}}"
    )
}

#[test]
fn a_key_escaped_in_the_stream_or_split_over_events_is_redacted_once_decoded() {
    let world = world();
    // Claude's stream: the answer (and a `DONE:` line) holds the key with its first character
    // JSON-escaped, so that only the decoded text shows it; a prompt with "fail" gets an
    // error whose message holds it.
    let escaped = "\\\\u0073${MOCK_API_KEY#s}";
    use_script(
        &world,
        "claude",
        &format!(
            "prompt=$(cat)\n\
             echo '{{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"0d54be32-b686-4109-b4c6-7b2b846a9fd4\"}}'\n\
             case \"$prompt\" in\n\
             *fail*) printf '%s\\n' \"{error}\"; exit 1;;\n\
             *) printf '%s\\n' \"{answer}\";;\n\
             esac\n",
            answer = claude_result(&format!("the key is {escaped}\\nDONE: {escaped}"), false)
                .replace('"', "\\\""),
            error = claude_result(&format!("API Error: 401 bad key {escaped}"), true)
                .replace('"', "\\\""),
        ),
    );
    let key = key_arg(&world);
    let done = world.ganger(&["start", "esc", "--message", "hi", "--key", &key, "--json"]);
    done.expect_code(0);
    let report = done.json();
    assert_eq!(report["done"], "DONE: [redacted:mock]", "{report:#}");
    let answer = std::fs::read_to_string(round_file(&world, "esc", "round-1.answer.md")).unwrap();
    assert_eq!(answer, "the key is [redacted:mock]\nDONE: [redacted:mock]");
    // The raw stream holds no escaped form of the key either.
    let raw = std::fs::read_to_string(round_file(&world, "esc", "round-1.jsonl")).unwrap();
    assert!(!raw.contains(&SECRET[1..]), "{raw}");
    let failed = world.ganger(&["start", "err", "--message", "fail", "--key", &key, "--json"]);
    failed.expect_code(1);
    let report = failed.json();
    assert_eq!(
        report["reason"],
        "Claude Code reported an error: api_error: API Error: 401 bad key [redacted:mock]",
        "{report:#}"
    );

    // Gemini's stream: the answer comes in pieces that are joined; the key is split between
    // two of them, so that no line of the stream holds it.
    use_script(
        &world,
        "gemini",
        "cat > /dev/null\n\
         head=${MOCK_API_KEY%??????????}; tail=${MOCK_API_KEY#\"$head\"}\n\
         echo '{\"type\":\"init\",\"session_id\":\"8bb81ce9-62f7-4e36-91cf-820ec6841ca1\",\"model\":\"gemini-fake\"}'\n\
         printf '{\"type\":\"message\",\"role\":\"assistant\",\"content\":\"DONE: %s\",\"delta\":true}\\n' \"$head\"\n\
         printf '{\"type\":\"message\",\"role\":\"assistant\",\"content\":\"%s\",\"delta\":true}\\n' \"$tail\"\n\
         echo '{\"type\":\"result\",\"status\":\"success\",\"stats\":{\"input_tokens\":1,\"output_tokens\":1}}'\n",
    );
    let joined = world.ganger(&["start", "split", "--message", "hi", "--key", &key, "--json"]);
    joined.expect_code(0);
    assert_eq!(joined.json()["done"], "DONE: [redacted:mock]");
    let answer = std::fs::read_to_string(round_file(&world, "split", "round-1.answer.md")).unwrap();
    assert_eq!(answer, "DONE: [redacted:mock]");

    let mut outputs = vec![done, failed, joined];
    for args in [
        &["status"][..],
        &["status", "--json"],
        &["status", "esc"],
        &["status", "err"],
        &["status", "split", "--json"],
        &["log", "esc"],
        &["log", "esc", "--json"],
        &["log", "err"],
        &["log", "split"],
        &["log", "split", "--json"],
        &["watch"],
        &["watch", "--json"],
    ] {
        let run = world.ganger(args);
        run.expect_code(0);
        outputs.push(run);
    }
    assert_key_nowhere(&world, &outputs.iter().collect::<Vec<_>>());
}

/// The peak resident memory of a living process, in bytes.
fn peak_rss(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .unwrap_or_else(|| panic!("no VmHWM in {status}"));
    let kb: u64 = line
        .split_whitespace()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap();
    kb * 1024
}

/// Starts `ganger` with piped stdout and stderr (and stdin, when `stdin`), to watch it while
/// it runs.
fn spawn_ganger(world: &World, args: &[&str], stdin: bool) -> std::process::Child {
    let mut command = world.command(args);
    command.stdout(Stdio::piped()).stderr(Stdio::piped());
    if stdin {
        command.stdin(Stdio::piped());
    }
    #[expect(
        clippy::disallowed_methods,
        reason = "the test watches ganger's memory while it runs"
    )]
    command.spawn().unwrap()
}

/// `length` bytes of the file at `path` from `offset`.
fn bytes_at(path: &Path, offset: u64, length: usize) -> String {
    use std::io::{Read, Seek};
    let mut bytes = vec![0u8; length];
    let mut file = std::fs::File::open(path).unwrap();
    file.seek(std::io::SeekFrom::Start(offset)).unwrap();
    file.read_exact(&mut bytes).unwrap();
    String::from_utf8_lossy(&bytes).into_owned()
}

fn file_size(path: &Path) -> u64 {
    std::fs::metadata(path).map_or(0, |m| m.len())
}

/// The line cap, which the key below straddles.
const CAP: u64 = ganger_agents::scan::MAX_LINE as u64;
/// How long the agent's long line is.
const LONG: u64 = 64 << 20;
/// Where the key is in the agent's long stderr line (it straddles two reads of a pipe), and
/// how long that line is besides.
const ERR_KEY_AT: u64 = (1 << 20) - 6;
const ERR_LONG: u64 = 56 << 20;
/// What the host may use at most while it copies those lines.
const BOUND: u64 = 48 << 20;

#[test]
fn a_line_of_any_length_keeps_the_hosts_memory_bounded_and_the_raw_file_whole() {
    let world = world();
    let release = world.root().join("release");
    use_script(
        &world,
        "text",
        &format!(
            "cat > /dev/null\n\
             {{ head -c {err_before} /dev/zero | tr '\\0' c; printf '%s' \"$MOCK_API_KEY\"\n\
             head -c {err_after} /dev/zero | tr '\\0' d; echo; }} >&2\n\
             head -c {before} /dev/zero | tr '\\0' a\n\
             printf '%s' \"$MOCK_API_KEY\"\n\
             head -c {after} /dev/zero | tr '\\0' b\n\
             echo\n\
             echo 'after the long line'\n\
             while [ ! -e {release} ]; do sleep 0.05; done\n\
             echo 'DONE: ok'\n",
            err_before = ERR_KEY_AT,
            err_after = ERR_LONG - ERR_KEY_AT,
            before = CAP - 8,
            after = LONG - CAP,
            release = release.display(),
        ),
    );
    let key = key_arg(&world);
    let child = spawn_ganger(
        &world,
        &["start", "long", "--message", "hi", "--key", &key, "--json"],
        false,
    );
    let raw = round_file(&world, "long", "round-1.jsonl");
    let err = round_file(&world, "long", "round-1.err");
    let expected = (CAP - 8) + "[redacted:mock]".len() as u64 + (LONG - CAP) + 1 + 20;
    let expected_err = ERR_LONG + "[redacted:mock]".len() as u64 + 1;
    assert!(
        wait_until(Duration::from_secs(60), || file_size(&raw) >= expected
            && file_size(&err) >= expected_err),
        "the raw file has {} of {expected} bytes, stderr {} of {expected_err}",
        file_size(&raw),
        file_size(&err)
    );
    let peak = peak_rss(child.id());
    std::fs::write(&release, "").unwrap();
    let output = child.wait_with_output().unwrap();
    let run = Run::from(output);
    run.expect_code(0);
    assert!(
        peak < BOUND,
        "the host peaked at {} MiB copying lines of {} and {} MiB",
        peak >> 20,
        LONG >> 20,
        ERR_LONG >> 20
    );
    let report = run.json();
    assert_eq!(report["status"], "done", "{report:#}");
    assert_eq!(report["long_lines"], 1, "{report:#}");
    assert_eq!(report["done"], "DONE: ok");
    // The raw file keeps every byte, the key redacted where it straddled the cap; so does
    // stderr, where the key straddled a read of the pipe.
    assert_eq!(file_size(&raw), expected + "DONE: ok\n".len() as u64);
    assert_eq!(
        bytes_at(&raw, CAP - 16, 64),
        format!("aaaaaaaa[redacted:mock]{}", "b".repeat(64 - 23))
    );
    assert_eq!(file_size(&err), expected_err);
    assert_eq!(
        bytes_at(&err, ERR_KEY_AT - 8, 64),
        format!("cccccccc[redacted:mock]{}", "d".repeat(64 - 23))
    );
    let log = world.ganger(&["log", "long"]);
    log.expect_code(0);
    // The line as the raw file holds it: CAP - 8 bytes, the redacted key, LONG - CAP bytes.
    let line = LONG + "[redacted:mock]".len() as u64 - 8;
    assert!(
        log.stdout.starts_with(&format!(
            "    1 not read: a line of {line} bytes, over the cap"
        )),
        "{}",
        log.stdout
    );
}

#[test]
fn summarize_reads_an_endless_line_in_bounded_memory() {
    let world = world();
    let mut child = spawn_ganger(&world, &["summarize", "/dev/stdin", "--json"], true);
    let mut stdin = child.stdin.take().unwrap();
    let block = vec![0u8; 1 << 20];
    for _ in 0..(LONG >> 20) {
        stdin.write_all(&block).unwrap();
    }
    // Everything but what the pipe holds has been read: the peak is the reading's.
    let peak = peak_rss(child.id());
    stdin.write_all(b"\nnot an event\n").unwrap();
    drop(stdin);
    let run = Run::from(child.wait_with_output().unwrap());
    run.expect_code(0);
    assert!(
        peak < BOUND,
        "summarize peaked at {} MiB reading a {} MiB line",
        peak >> 20,
        LONG >> 20
    );
    let summary = &run.json()["summary"];
    assert_eq!(summary["lines"], 2, "{summary:#}");
    assert_eq!(summary["long_lines"], 1, "{summary:#}");
}

/// What a terminal would act on: C0 controls but newline and tab, DEL, C1 controls.
fn terminal_controls(text: &str) -> Vec<char> {
    text.chars()
        .filter(|c| c.is_control() && *c != '\n' && *c != '\t')
        .collect()
}

#[test]
fn terminal_controls_from_an_agent_or_a_check_never_reach_the_terminal() {
    let world = world();
    // Clear the screen and home the cursor, set the window title (OSC ... BEL), a C1 CSI,
    // and a carriage return that would hide what comes before it.
    use_script(
        &world,
        "text",
        "cat > /dev/null; echo 'boom \\033[31m' >&2\n\
         printf 'DONE: \\033[2J\\033[Hx \\033]0;pwned\\007 \\302\\23331m hidden\\rshown\\n'\n",
    );
    let check =
        "printf 'check \\033]8;;http://x\\033\\\\link\\033]8;;\\033\\\\ \\302\\2332J\\n'; exit 1";
    let start = world.ganger(&["start", "esc", "--message", "hi", "--check", check]);
    start.expect_code(1);
    let json = world.ganger(&["status", "esc", "--json"]);
    json.expect_code(0);
    // JSON keeps the text exactly, escaped.
    let report = json.json();
    assert_eq!(
        report["done"],
        "DONE: \u{1b}[2J\u{1b}[Hx \u{1b}]0;pwned\u{7} \u{9b}31m hidden\rshown"
    );
    let mut runs = vec![start, json];
    for args in [
        &["status"][..],
        &["status", "esc"],
        &["status", "--group-by", "none"],
        &["watch"],
        &["watch", "--json"],
        &["log", "esc"],
        &["log", "esc", "--json"],
    ] {
        let run = world.ganger(args);
        run.expect_code(0);
        runs.push(run);
    }
    for run in &runs {
        for text in [&run.stdout, &run.stderr] {
            assert_eq!(terminal_controls(text), Vec::<char>::new(), "in:\n{text}");
        }
    }
    // The human report shows them, escaped.
    let human = &runs[3].stdout;
    assert!(
        human.contains(
            "DONE: \\u001b[2J\\u001b[Hx \\u001b]0;pwned\\u0007 \\u009b31m hidden\\u000dshown"
        ),
        "{human}"
    );
}

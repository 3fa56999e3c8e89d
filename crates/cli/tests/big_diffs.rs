//! A task whose diff is tens of megabytes (issue 38): `GET .../diff` streams the patch as git
//! writes it instead of holding it in serve's memory, and the MCP `diff` tool pages through
//! it from one build of the patch instead of building the whole patch again for every page.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]

use crate::mcp_client::Mcp;
use crate::web_world::{self, Served};

use ganger_test_support::World;
use serde_json::json;
use std::io::Read;
use std::time::Duration;

/// A task whose one round wrote `big.txt`: five million numbered lines, about 39 MB (its
/// patch about 44 MB).
fn world_with_a_big_task() -> World {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    world.use_command_agent(
        "cat >/dev/null; seq 1 5000000 > big.txt; echo 'DONE: big'",
        "",
        "",
    );
    world
        .ganger(&["start", "big", "--message", "write it"])
        .expect_code(0);
    world
}

/// How much more memory (kB) process `pid` ever held than `before`.
fn grown_kb(pid: u32, before: u64) -> u64 {
    web_world::proc_status(pid, "VmHWM").saturating_sub(before)
}

#[test]
fn a_big_diff_streams_over_http_without_being_held_in_memory() {
    let served = Served::start(world_with_a_big_task());
    let pid = served.pid();
    // Settled first: the page of tasks read once.
    assert_eq!(served.get("/api/tasks").status, 200);
    let before = web_world::proc_status(pid, "VmHWM");
    for path in ["/api/tasks/big/diff", "/api/tasks/big/rounds/1/diff"] {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(Duration::from_secs(120)))
            .build()
            .into();
        let response = agent
            .get(format!("{}{path}", served.base))
            .header("Authorization", format!("Bearer {}", served.token))
            .call()
            .unwrap();
        assert_eq!(response.status().as_u16(), 200, "{path}");
        let mut body = response.into_body();
        let mut reader = body.with_config().limit(u64::MAX).reader();
        let (mut total, mut head, mut tail) = (0usize, Vec::new(), Vec::new());
        let mut buffer = vec![0u8; 1 << 16];
        loop {
            let read = reader.read(&mut buffer).unwrap();
            if read == 0 {
                break;
            }
            if head.len() < 4096 {
                head.extend_from_slice(&buffer[..read.min(4096)]);
            }
            tail = buffer[..read].to_vec();
            total += read;
        }
        let head = String::from_utf8_lossy(&head);
        assert!(head.contains("+++ b/big.txt"), "{path}: {head}");
        assert!(
            String::from_utf8_lossy(&tail).ends_with("+5000000\n"),
            "{path}"
        );
        assert!(total > 40_000_000, "{path}: {total} bytes");
    }
    let grown = grown_kb(pid, before);
    assert!(
        grown < 20_000,
        "serving two 44 MB patches took serve's peak memory {grown} kB higher"
    );
}

#[test]
fn the_mcp_diff_tool_pages_a_big_patch_from_one_build_of_it() {
    let world = world_with_a_big_task();
    // git as found on PATH, noting each `git diff` it runs.
    let shim = world.root().join("shim");
    std::fs::create_dir_all(&shim).unwrap();
    let log = world.root().join("git-diffs.log");
    let real_git = String::from_utf8(
        std::process::Command::new("sh")
            .args(["-c", "command -v git"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    std::fs::write(
        shim.join("git"),
        format!(
            "#!/bin/sh\nfor a in \"$@\"; do [ \"$a\" = diff ] && echo diff >> '{}'; done\nexec {} \"$@\"\n",
            log.display(),
            real_git.trim()
        ),
    )
    .unwrap();
    std::fs::set_permissions(
        shim.join("git"),
        <std::fs::Permissions as std::os::unix::fs::PermissionsExt>::from_mode(0o755),
    )
    .unwrap();
    let path = format!(
        "{}:{}",
        shim.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut mcp = Mcp::start(&world, &["--as", "tester"], &[("PATH", &path)], "pager");
    let before = web_world::proc_status(mcp.pid(), "VmHWM");
    let mut offset = 0u64;
    let mut pages = Vec::new();
    for _ in 0..3 {
        let page = mcp.ok(
            "diff",
            json!({"slug": "big", "round": 1, "offset": offset, "limit": 100000}),
        );
        assert!(page["total_bytes"].as_u64().unwrap() > 40_000_000, "{page}");
        let text = page["text"].as_str().unwrap().to_owned();
        assert!(text.ends_with('\n'));
        offset = page["next_offset"].as_u64().unwrap();
        pages.push(text);
    }
    assert!(pages[0].contains("+++ b/big.txt"), "{}", &pages[0][..400]);
    assert!(pages[2].starts_with('+'), "{}", &pages[2][..40]);
    // The last page, and one past the end.
    let total = mcp.ok("diff", json!({"slug": "big", "round": 1}))["total_bytes"]
        .as_u64()
        .unwrap();
    let last = mcp.ok(
        "diff",
        json!({"slug": "big", "round": 1, "offset": total - 20, "limit": 100000}),
    );
    assert!(
        last["text"].as_str().unwrap().ends_with("+5000000\n"),
        "{last}"
    );
    assert_eq!(last["next_offset"], serde_json::Value::Null);
    let diffs = std::fs::read_to_string(&log).unwrap_or_default();
    assert_eq!(
        diffs.lines().count(),
        1,
        "five pages of one round's patch ran `git diff` {} times",
        diffs.lines().count()
    );
    let grown = grown_kb(mcp.pid(), before);
    assert!(
        grown < 20_000,
        "paging a 44 MB patch took the MCP server's peak memory {grown} kB higher"
    );
}

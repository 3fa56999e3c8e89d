//! `ganger image build` with a real Docker daemon and mmdebstrap: the OpenCode image builds
//! (once per machine: later runs find it), is listed with its labels, and runs the tested CLI;
//! a second build is a no-op; a bad agent is a one-line error, an unreachable daemon an
//! environment failure naming its socket.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]

use ganger_test_support::{docker_available, ensure_worker_image, opencode_version, run_in_image};
use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

fn ganger() -> &'static Path {
    env!("CARGO_BIN_EXE_ganger").as_ref()
}

fn run(args: &[&str], env: &[(&str, &str)]) -> Output {
    Command::new(ganger())
        .args(args)
        .envs(env.iter().copied())
        .current_dir(std::env::temp_dir())
        .output()
        .unwrap()
}

#[test]
fn the_opencode_image_builds_is_listed_and_runs_the_tested_cli() {
    if !docker_available("the_opencode_image_builds_is_listed_and_runs_the_tested_cli") {
        return;
    }
    let image = ensure_worker_image(ganger(), "opencode");
    assert!(
        image.starts_with(&format!("ganger-opencode:{}-", opencode_version())),
        "{image}"
    );

    let listed = run(&["image", "list", "--json"], &[]);
    assert!(listed.status.success(), "{listed:?}");
    let listed: serde_json::Value = serde_json::from_slice(&listed.stdout).unwrap();
    let entry = listed["images"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["image"] == image.as_str())
        .unwrap_or_else(|| panic!("{image} is not listed: {listed:#}"));
    assert_eq!(entry["agent"], "opencode");
    assert_eq!(entry["version"], opencode_version());
    assert_eq!(entry["suite"], "trixie");
    assert!(entry["size"].as_u64().unwrap() > 100_000_000, "{entry:#}");

    let docker = ganger_docker::Docker::connect().unwrap();
    let labels = docker.image(&image).unwrap().unwrap().labels;
    assert_eq!(labels[ganger_docker::labels::MANAGED], "1");
    assert_eq!(labels[ganger_docker::labels::AGENT], "opencode");
    assert_eq!(
        labels[ganger_docker::labels::AGENT_VERSION],
        opencode_version()
    );
    assert!(labels.contains_key(ganger_docker::labels::PACKAGES));

    let (code, output) = run_in_image(&image, &["opencode", "--version"]);
    assert_eq!((code, output.trim()), (0, opencode_version()), "{output}");

    // The image is there now: a second build does nothing, quickly.
    let started = Instant::now();
    let again = run(&["image", "build", "--agent", "opencode", "--json"], &[]);
    assert!(again.status.success(), "{again:?}");
    let again: serde_json::Value = serde_json::from_slice(&again.stdout).unwrap();
    assert_eq!(again["images"][0]["image"], image.as_str());
    assert_eq!(again["images"][0]["built"], false);
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
}

/// The one line on stderr of a failed command, asserting there is only one.
fn one_error_line(output: &Output) -> String {
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{stderr}");
    lines[0].to_owned()
}

#[test]
fn an_unknown_agent_and_an_unreachable_daemon_are_one_line_errors() {
    let unknown = run(&["image", "build", "--agent", "nosuch"], &[]);
    let line = one_error_line(&unknown);
    assert!(line.contains("unknown agent \"nosuch\""), "{line}");

    let unreachable = run(
        &["image", "build", "--agent", "opencode"],
        &[("DOCKER_HOST", "unix:///nonexistent")],
    );
    // The environment failed, not the input: exit 70, the socket named in the cause.
    assert_eq!(unreachable.status.code(), Some(70), "{unreachable:?}");
    let stderr = String::from_utf8_lossy(&unreachable.stderr);
    assert!(stderr.starts_with("error: "), "{stderr}");
    assert!(stderr.contains("/nonexistent"), "{stderr}");
}

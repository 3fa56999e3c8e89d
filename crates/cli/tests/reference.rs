//! `ganger completions` and `ganger man`: generated from the command line's own definitions,
//! they name every command and option the parser takes, and bash reads the completions.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]

use ganger_test_support::World;

const COMMANDS: [&str; 8] = [
    "start", "fix", "status", "wait", "merge", "fleet", "watch", "clean",
];

#[test]
fn completions_name_every_command_and_bash_reads_them() {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    for shell in ["bash", "zsh", "fish"] {
        let run = world.ganger(&["completions", shell]);
        run.expect_code(0);
        for command in COMMANDS {
            assert!(run.stdout.contains(command), "{shell}: no {command}");
        }
        assert!(
            run.stdout.contains("until-green"),
            "{shell}: no --until-green"
        );
    }
    let bash = world.ganger(&["completions", "bash"]).stdout;
    let file = world.root().join("ganger.bash");
    std::fs::write(&file, bash).unwrap();
    let checked = std::process::Command::new("bash")
        .arg("-n")
        .arg(&file)
        .output()
        .unwrap();
    assert!(
        checked.status.success(),
        "{}",
        String::from_utf8_lossy(&checked.stderr)
    );
    let run = world.ganger(&["completions", "tcsh-but-not-really"]);
    run.expect_code(2);
}

#[test]
fn the_manual_page_has_a_section_per_command() {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    let run = world.ganger(&["man"]);
    run.expect_code(0);
    assert!(
        run.stdout.starts_with(".ie") || run.stdout.contains(".TH ganger 1"),
        "{}",
        &run.stdout[..200]
    );
    for command in COMMANDS {
        assert!(
            run.stdout.contains(&format!(".TH ganger-{command} ")),
            "no page for {command}"
        );
    }
    // Hidden commands (the round host, the docker shim) are not documented for people.
    assert!(!run.stdout.contains("ganger-host"));
    assert!(!run.stdout.contains("ganger-docker-round"));
}

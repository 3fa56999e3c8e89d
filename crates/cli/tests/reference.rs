//! `ganger completions` and `ganger man`: generated from the command line's own definitions,
//! they name every command and option the parser takes, and bash reads the completions. What
//! only ganger's own processes pass (a warm host's owner) is in none of them, nor in any
//! command's help, and a person cannot give it.

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

/// The options only ganger's own hidden processes take (`ganger warm-host --kept-by PID`,
/// `ganger host --claim CLAIM`).
const INTERNAL: [&str; 2] = ["--kept-by", "--claim"];

/// The commands a help text lists under "Commands:" (`help` aside).
fn listed_commands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|line| !line.starts_with("Commands:"))
        .skip(1)
        .take_while(|line| !line.trim().is_empty())
        // A command's line, not a long description's next line (indented further).
        .filter_map(|line| {
            line.strip_prefix("  ")
                .filter(|rest| !rest.starts_with(' '))
        })
        .filter_map(|line| line.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_owned)
        .collect()
}

/// Issue 38.20: `--kept-by <PID>` ("a warm host's owner") showed in `ganger start --help` and
/// `ganger fix --help`, and they took it.
#[test]
fn no_help_names_an_option_only_ganger_itself_passes() {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    let top = world.ganger(&["--help"]);
    top.expect_code(0);
    let mut seen = 0;
    let mut commands: Vec<Vec<String>> = listed_commands(&top.stdout)
        .into_iter()
        .map(|c| vec![c])
        .collect();
    while let Some(command) = commands.pop() {
        let mut args: Vec<&str> = command.iter().map(String::as_str).collect();
        args.push("--help");
        let help = world.ganger(&args);
        help.expect_code(0);
        seen += 1;
        for option in INTERNAL {
            assert!(
                !help.stdout.contains(option),
                "`ganger {}` shows {option}:\n{}",
                command.join(" "),
                help.stdout
            );
        }
        for sub in listed_commands(&help.stdout) {
            let mut deeper = command.clone();
            deeper.push(sub);
            commands.push(deeper);
        }
    }
    assert!(seen > 40, "only {seen} helps were read");
    for generated in [
        world.ganger(&["man"]).stdout,
        world.ganger(&["completions", "bash"]).stdout,
    ] {
        for option in INTERNAL {
            assert!(!generated.contains(option), "{option} is generated");
        }
    }
    for command in ["start", "fix"] {
        let given = world.ganger(&[command, "t", "--message", "x", "--kept-by", "1"]);
        given.expect_code(2);
        assert!(given.stderr.contains("--kept-by"), "{}", given.stderr);
    }
}

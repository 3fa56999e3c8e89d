//! `ganger completions SHELL` and `ganger man`: a shell's completions and the manual page,
//! generated from the very clap definitions that parse the command line, so they never
//! disagree with it.

use crate::args::{Cli, CompletionsArgs};
use crate::{Outcome, exit, printer};
use clap::{Command, CommandFactory};
use std::collections::BTreeMap;

/// The whole command line, every command's arguments made (they are deferred until a command
/// runs: args.rs).
fn built() -> Command {
    let mut command = Cli::command();
    command.build();
    // clap copies the commands into `help`'s tree before it makes their deferred parts, so the
    // copies lack their own subcommands (`ganger help agents list`): add them as clap would.
    let nested: BTreeMap<String, Vec<Command>> = command
        .get_subcommands()
        .filter(|sub| sub.get_name() != "help")
        .map(|sub| {
            let copies = sub
                .get_subcommands()
                .filter(|inner| inner.get_name() != "help")
                .map(|inner| help_copy(inner, &format!("ganger help {}", sub.get_name())))
                .collect();
            (sub.get_name().to_owned(), copies)
        })
        .collect();
    command.mut_subcommand("help", |help| {
        help.mut_subcommands(|entry| match nested.get(entry.get_name()) {
            Some(copies) if !copies.is_empty() => entry.subcommands(copies.clone()),
            _ => entry,
        })
    })
}

/// A command as `help`'s tree holds it under `parent`: its name and summary.
fn help_copy(command: &Command, parent: &str) -> Command {
    // clap takes a name as a 'static str: the few names are leaked once, as `man`'s are.
    let name: &'static str = Box::leak(command.get_name().to_owned().into_boxed_str());
    let copy = Command::new(name)
        .bin_name(format!("{parent} {name}"))
        .hide(command.is_hide_set())
        .disable_help_flag(true)
        .disable_version_flag(true);
    match command.get_about() {
        Some(about) => copy.about(about.clone()),
        None => copy,
    }
}

/// `command` with its hidden commands (the ones ganger starts itself: a round host, a warm
/// host, a docker round) reduced to their names: the shells' generators complete hidden
/// commands' options (`--kept-by`) that no person types.
fn without_hidden(command: Command) -> Command {
    command.mut_subcommands(|sub| {
        if !sub.is_hide_set() {
            return sub;
        }
        // clap takes a name as a 'static str: the few names are leaked once, as `man`'s are.
        let name: &'static str = Box::leak(sub.get_name().to_owned().into_boxed_str());
        let bin_name = sub.get_bin_name().unwrap_or(name).to_owned();
        Command::new(name).bin_name(bin_name).hide(true)
    })
}

pub(crate) fn completions(args: CompletionsArgs) -> Outcome {
    let mut command = without_hidden(built());
    let mut out = Vec::new();
    clap_complete::generate(args.shell, &mut command, "ganger", &mut out);
    printer::emit_verbatim(&out)?;
    Ok(exit::OK)
}

pub(crate) fn man() -> Outcome {
    let mut out = Vec::new();
    let command = built();
    clap_mangen::Man::new(command.clone()).render(&mut out)?;
    // Each subcommand's page follows, so that one page documents every command.
    for sub in command
        .get_subcommands()
        .filter(|s| !s.is_hide_set() && s.get_name() != "help")
    {
        // clap takes a command's name as a 'static str: the few page names are leaked once.
        let name: &'static str = Box::leak(format!("ganger-{}", sub.get_name()).into_boxed_str());
        let page = sub.clone().name(name);
        clap_mangen::Man::new(page).render(&mut out)?;
    }
    printer::emit_verbatim(&out)?;
    Ok(exit::OK)
}

#[cfg(test)]
mod tests {
    use super::built;

    #[test]
    fn the_built_command_line_has_every_argument_and_helps_tree_its_subcommands() {
        let command = built();
        let start = command.find_subcommand("start").unwrap();
        assert!(start.get_arguments().any(|a| a.get_id() == "until_green"));
        // The global options reach every command.
        assert!(start.get_arguments().any(|a| a.get_id() == "directory"));
        let help = command.find_subcommand("help").unwrap();
        let agents = help.find_subcommand("agents").unwrap();
        let names: Vec<&str> = agents.get_subcommands().map(|s| s.get_name()).collect();
        assert_eq!(names, ["list", "install", "doctor", "canary"]);
        assert!(
            help.find_subcommand("fleet")
                .unwrap()
                .find_subcommand("submit")
                .is_some()
        );
    }
}

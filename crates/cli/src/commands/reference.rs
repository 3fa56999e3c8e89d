//! `ganger completions SHELL` and `ganger man`: a shell's completions and the manual page,
//! generated from the very clap definitions that parse the command line, so they never
//! disagree with it.

use crate::args::{Cli, CompletionsArgs};
use crate::{Outcome, exit, printer};
use clap::CommandFactory;

pub(crate) fn completions(args: CompletionsArgs) -> Outcome {
    let mut command = Cli::command();
    let mut out = Vec::new();
    clap_complete::generate(args.shell, &mut command, "ganger", &mut out);
    printer::emit_verbatim(&out)?;
    Ok(exit::OK)
}

pub(crate) fn man() -> Outcome {
    let mut out = Vec::new();
    clap_mangen::Man::new(Cli::command()).render(&mut out)?;
    // Each subcommand's page follows, so that one page documents every command.
    for sub in Cli::command()
        .get_subcommands()
        .filter(|s| !s.is_hide_set())
    {
        // clap takes a command's name as a 'static str: the few page names are leaked once.
        let name: &'static str = Box::leak(format!("ganger-{}", sub.get_name()).into_boxed_str());
        let page = sub.clone().name(name);
        clap_mangen::Man::new(page).render(&mut out)?;
    }
    printer::emit_verbatim(&out)?;
    Ok(exit::OK)
}

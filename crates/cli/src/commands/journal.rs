//! `ganger watch` and `ganger ack`: the commander's journal after its cursor, once or as it
//! grows (`--follow` polls the store), and moving the cursor.

use crate::Outcome;
use crate::args::{AckArgs, WatchArgs};
use crate::exit;
use crate::printer;
use ganger_engine::Workspace;
use std::time::Duration;

/// How often `--follow` looks for new entries.
const POLL: Duration = Duration::from_millis(300);

pub(crate) fn watch(ws: &Workspace, args: WatchArgs) -> Outcome {
    let page = ganger_engine::journal::watch(ws, args.as_name.as_deref(), None)?;
    if !args.follow {
        if args.json {
            printer::emit_json(&page)?;
        } else {
            printer::emit(&printer::journal_text(&page))?;
        }
        return Ok(exit::OK);
    }
    let mut last = page.cursor;
    let mut page = page;
    loop {
        for entry in &page.entries {
            if args.json {
                printer::emit_json_line(entry)?;
            } else {
                printer::emit(&printer::journal_entry_text(entry))?;
            }
            last = last.max(entry.id);
        }
        std::thread::sleep(POLL);
        page = ganger_engine::journal::watch(ws, args.as_name.as_deref(), Some(last))?;
    }
}

/// `ganger.ack/1` (docs/json.md).
pub(crate) fn ack(ws: &Workspace, args: AckArgs) -> Outcome {
    let report = ganger_engine::journal::ack(ws, args.as_name.as_deref(), args.upto)?;
    if args.json {
        printer::emit_json(&report)?;
    } else {
        printer::emit(&format!(
            "{}: journal acknowledged up to entry {}\n",
            report.commander, report.cursor
        ))?;
    }
    Ok(exit::OK)
}

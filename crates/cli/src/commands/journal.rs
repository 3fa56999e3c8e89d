//! `ganger watch` and `ganger ack`: the commander's journal after its cursor, once or as it
//! grows (`--follow` polls the store), and moving the cursor.

use crate::Outcome;
use crate::args::{AckArgs, WatchArgs};
use crate::exit;
use crate::printer::{self, Printer};
use ganger_engine::Engine;
use std::time::Duration;

/// How often `--follow` looks for new entries.
const POLL: Duration = Duration::from_millis(300);
/// Every how many looks `--follow` also settles rounds whose host died (a lock probe per
/// running round), so that their ends reach the journal.
const SETTLE_EVERY: u32 = 10;

pub(crate) fn watch(engine: &Engine, args: WatchArgs) -> Outcome {
    let out = Printer::new(args.json);
    let page = engine.watch(args.as_name.as_deref(), None, true)?;
    if !args.follow {
        out.print(&page, || printer::journal_text(&page))?;
        return Ok(exit::OK);
    }
    let mut last = page.cursor;
    let mut page = page;
    let mut looks: u32 = 0;
    loop {
        for entry in &page.entries {
            out.item(entry, || printer::journal_entry_text(entry))?;
            last = last.max(entry.id);
        }
        std::thread::sleep(POLL);
        looks = looks.wrapping_add(1);
        let settle = looks.is_multiple_of(SETTLE_EVERY);
        page = engine.watch(args.as_name.as_deref(), Some(last), settle)?;
    }
}

/// `ganger.ack/1` (docs/json.md).
pub(crate) fn ack(engine: &Engine, args: AckArgs) -> Outcome {
    let report = engine.ack(args.as_name.as_deref(), args.upto)?;
    Printer::new(args.json).print(&report, || {
        format!(
            "{}: journal acknowledged up to entry {}\n",
            report.commander, report.cursor
        )
    })?;
    Ok(exit::OK)
}

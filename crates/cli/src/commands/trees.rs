//! `ganger trees list|fill|drain`: the pool of worktrees made ahead of time and the tree cache
//! (docs/trees.md).

use crate::Outcome;
use crate::exit;
use crate::printer::Printer;
use crate::trees_args::{CheckoutArgs, TreesAction, TreesArgs};
use ganger_engine::Engine;
use ganger_engine::trees::TreesReport;

/// The pool for people: what this command did, then a line per base.
fn text(report: &TreesReport) -> String {
    let mut text = String::new();
    if report.busy {
        text.push_str("another filler is at work; asked it to look again\n");
    }
    let plural = |n: usize| if n == 1 { "" } else { "s" };
    if report.made > 0 {
        let n = report.made;
        text.push_str(&format!("checked out {n} worktree{}\n", plural(n)));
    }
    if report.removed > 0 {
        let n = report.removed;
        text.push_str(&format!("removed {n} pooled worktree{}\n", plural(n)));
    }
    if report.bases.is_empty() {
        text.push_str("no pooled worktrees\n");
    }
    for base in &report.bases {
        text.push_str(&format!("{}  {} ready\n", base.base, base.ready));
    }
    if report.pool == 0 {
        text.push_str("the pool is off: set [trees] pool = N in ganger.toml\n");
    }
    cache_text(&mut text, report);
    text
}

/// The tree cache's lines: what this command did, then a line per cached base.
fn cache_text(text: &mut String, report: &TreesReport) {
    if report.max == 0 {
        return;
    }
    if report.cached_made > 0 {
        text.push_str("checked out the base's cached tree\n");
    }
    if report.cached_removed > 0 {
        let n = report.cached_removed;
        let s = if n == 1 { "" } else { "s" };
        text.push_str(&format!("removed {n} cached tree{s}\n"));
    }
    for cached in &report.cached {
        let mb = cached.bytes as f64 / 1e6;
        text.push_str(&format!("{}  cached, {mb:.1} MB\n", cached.base));
    }
}

/// `ganger checkout SLUG [PATH]`.
pub(crate) fn checkout(engine: &Engine, args: CheckoutArgs) -> Outcome {
    let out = Printer::new(args.json);
    let report = engine.checkout(&args.slug, args.path.as_deref())?;
    out.print(&report, || {
        format!(
            "checked out task {} at {}: detached at {}, the task's files as of now on top\n",
            report.task,
            report.worktree.display(),
            &report.at[..report.at.len().min(12)]
        )
    })?;
    Ok(exit::OK)
}

pub(crate) fn run(engine: &Engine, args: TreesArgs) -> Outcome {
    let out = Printer::new(args.json);
    let report = match args.action.unwrap_or(TreesAction::List) {
        TreesAction::List => engine.trees(),
        TreesAction::Fill { base } => engine.fill_trees(base.as_deref())?,
        TreesAction::Drain => engine.drain_trees()?,
    };
    out.print(&report, || text(&report))?;
    Ok(exit::OK)
}

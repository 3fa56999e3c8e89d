//! Moving the base: the commit the batch lands as is recorded in the store (`landing`)
//! before the base moves, and the batch is recorded landed after, so that a lander killed
//! between the two leaves a record the next one settles by asking git whether the base has
//! that commit. The move is a compare-and-swap from the head the batch was tested on: `git
//! update-ref BASE NEW OLD`, or, where the base is checked out, a fast-forward of that
//! checkout (git moves the branch only from the head it read, and refuses to overwrite a
//! file). Never a force: a base that moved meanwhile is not touched, and the batch is queued
//! again to be tested on the new head.

use crate::base::config::LandMode;
use crate::base::error::{EngineError, Result};
use crate::base::notice::Notices;
use crate::ops::land::chain::Chain;
use crate::ops::land::context::{Lander, runs_phrase, short};
use crate::ops::land::judge::judge;
use crate::ops::land::report::BatchReport;
use ganger_store::LandItem;

/// Lands `landing` (the batch's tasks that passed, in order) on the base.
pub(crate) fn land(
    lander: &mut Lander<'_>,
    chain: &mut Chain<'_>,
    report: &mut BatchReport,
    landing: &[&LandItem],
    notices: &mut dyn Notices,
) -> Result<()> {
    if landing.is_empty() {
        lander.store.land_finish(report.batch, false)?;
        report.outcome = "empty".into();
        let line = format!("batch {}: nothing to land", report.batch);
        return lander.step(report, "empty", line, notices);
    }
    let commits: Vec<String> = landing.iter().map(|i| i.task_commit.clone()).collect();
    let tested = chain.prefix(&commits)?.map_err(|_| {
        EngineError::environment_message("a batch that merged while tested no longer merges")
    })?;
    let names: Vec<&str> = landing.iter().map(|i| i.slug.as_str()).collect();
    let mut message = format!(
        "Land batch {} into {}: {}\n\nTested together by ganger land ({} in the batch).\n\n",
        report.batch,
        lander.base,
        names.join(", "),
        runs_phrase(report.check_runs)
    );
    for item in landing {
        message.push_str(&format!("{}: {}\n", item.slug, item.task_commit));
    }
    let rebased = match lander.mode {
        LandMode::Merge => None,
        LandMode::Rebase => rebased(lander, chain, report, landing, notices)?,
    };
    let tip = match rebased {
        Some(tip) => tip,
        None => chain.landing_commit(&tested, &commits, &message)?,
    };
    lander.store.land_landing(report.batch, &tip)?;
    if lander.lost() {
        // Another lander may have settled this batch already: the base is not this one's.
        lander.store.land_finish(report.batch, false)?;
        return Err(EngineError::environment_message(format!(
            "the lander lost its claim on {} before moving it; nothing landed",
            lander.base
        )));
    }
    crate::base::faults::pause("land-before-ref-update");
    let moved = match move_base(lander, &report.head, &tip) {
        Ok(moved) => moved,
        Err(error) => {
            lander.store.land_finish(report.batch, false)?;
            return Err(error);
        }
    };
    if !moved {
        lander.store.land_finish(report.batch, false)?;
        report.outcome = "moved".into();
        let line = format!(
            "batch {}: {} moved from {}; the batch is tested again on its new head",
            report.batch,
            lander.base,
            short(&report.head)
        );
        return lander.step(report, "moved", line, notices);
    }
    crate::base::faults::pause("land-after-ref-update");
    lander.store.land_finish(report.batch, true)?;
    report.outcome = "landed".into();
    report.landed.extend(names.iter().map(|n| (*n).to_owned()));
    report.commit = Some(tip.clone());
    let line = format!(
        "batch {} landed on {}: {} ({}), {}",
        report.batch,
        lander.base,
        names.join(", "),
        short(&tip),
        runs_phrase(report.check_runs)
    );
    lander.step(report, "landed", line, notices)
}

/// `[land] mode = "rebase"`: the batch as one commit per landing task, in order, each on the
/// one before (the first on the head), with the tree of the batch up to that task and the
/// task's message. Every one of them is checked: a prefix the bisection did not run is run
/// now. `None` when one is red (a task that passed on top of all the others but not on the
/// tasks ahead of it alone): the batch then lands as its one tested merge commit.
fn rebased(
    lander: &mut Lander<'_>,
    chain: &mut Chain<'_>,
    report: &mut BatchReport,
    landing: &[&LandItem],
    notices: &mut dyn Notices,
) -> Result<Option<String>> {
    let mut tip = report.head.clone();
    for n in 1..=landing.len() {
        let commits: Vec<String> = landing[..n].iter().map(|i| i.task_commit.clone()).collect();
        let prefix = chain.prefix(&commits)?.map_err(|_| {
            EngineError::environment_message("a batch that merged while tested no longer merges")
        })?;
        let slugs: Vec<String> = landing[..n].iter().map(|i| i.slug.clone()).collect();
        let known_green = report.probes.iter().any(|p| p.green && p.tasks == slugs);
        if !known_green && !judge(lander, report, &prefix, slugs.clone(), notices)?.green() {
            let line = format!(
                "batch {}: {} is red without the tasks after it; landed as one merge commit",
                report.batch,
                slugs.join(" + ")
            );
            lander.step(report, "rebase-refused", line, notices)?;
            return Ok(None);
        }
        let item = landing[n - 1];
        let message = format!(
            "{}\n\nLanded by ganger land in batch {} into {}, rebased from {}.\n",
            lander.main.message_of(&item.task_commit)?.trim_end(),
            report.batch,
            lander.base,
            item.task_commit
        );
        let tree = lander.main.tree_of(&prefix).unwrap_or(prefix);
        tip = lander.main.commit_tree(&tree, &[tip.as_str()], &message)?;
    }
    Ok(Some(tip))
}

/// Moves the base from `head` to `tip`; false when it is no longer at `head`.
fn move_base(lander: &Lander<'_>, head: &str, tip: &str) -> Result<bool> {
    let base = &lander.base;
    let Some(dir) = lander.main.checkout_of(base)? else {
        return match lander.main.move_branch(base, tip, head) {
            Ok(()) => Ok(true),
            Err(_)
                if lander
                    .main
                    .resolve(&format!("refs/heads/{base}"))
                    .as_deref()
                    != Some(head) =>
            {
                Ok(false)
            }
            Err(error) => Err(error.into()),
        };
    };
    let there = ganger_git::discover(&dir)?;
    if there.resolve("HEAD").as_deref() != Some(head) {
        return Ok(false);
    }
    let dirty = there.tracked_changes()?;
    if !dirty.is_empty() {
        return Err(EngineError::invalid(format!(
            "the base {base} is checked out in {} with uncommitted changes ({}); nothing landed",
            dir.display(),
            dirty.join(", ")
        ))
        .hint("commit or stash them; the batch is queued again"));
    }
    match there.fast_forward(tip) {
        Ok(()) => Ok(true),
        Err(_) if there.resolve("HEAD").as_deref() != Some(head) => Ok(false),
        // Git's failure (a file in the way, the disk), kept with its cause: not bad input.
        Err(error) => Err(EngineError::environment(
            format!(
                "the checkout {} of {base} could not take the batch, nothing landed",
                dir.display()
            ),
            error,
        )),
    }
}

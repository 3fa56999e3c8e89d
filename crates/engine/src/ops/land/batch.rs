//! One batch, from the queue to the base: each task merged onto the base's head alone (a
//! conflict leaves the batch), the rest tested together and bisected when red
//! ([`Bisection`]), culprits sent back with the failing checks' output, and what passes landed
//! in one compare-and-swap move of the base, its new tip recorded in the store first.

use crate::base::error::{EngineError, Result};
use crate::base::notice::Notices;
use crate::ops::land::bisect::{Bisection, Next};
use crate::ops::land::chain::Chain;
use crate::ops::land::checks::Verdict;
use crate::ops::land::context::{Lander, short};
use crate::ops::land::judge::judge;
use crate::ops::land::landed::base_has;
use crate::ops::land::place::CheckPlace;
use crate::ops::land::report::{BatchReport, Returned};
use ganger_store::{LandBatch, LandItem};
use std::collections::HashMap;

/// Lands what it can of `items`, taken as `batch` on the base's head `batch.head`.
pub(crate) fn land_batch(
    lander: &mut Lander<'_>,
    batch: &LandBatch,
    items: Vec<LandItem>,
    notices: &mut dyn Notices,
) -> Result<BatchReport> {
    let mut report = BatchReport {
        batch: batch.id,
        base: batch.base.clone(),
        head: batch.head.clone(),
        outcome: "empty".into(),
        landed: Vec::new(),
        commit: None,
        returned: Vec::new(),
        check_runs: 0,
        retries: 0,
        flaky: Vec::new(),
        probes: Vec::new(),
        fix_rounds: Vec::new(),
    };
    let names: Vec<&str> = items.iter().map(|i| i.slug.as_str()).collect();
    let place = batch_place(lander, &items)?;
    let (kind, confined) = (place.kind(), place.isolates());
    if let Some(done) = lander.place.replace(place) {
        done.release(lander.ws);
    }
    let line = format!(
        "batch {} on {}{}: {}",
        batch.id,
        short(&batch.head),
        if confined {
            format!(" (checks in {kind})")
        } else {
            String::new()
        },
        names.join(", ")
    );
    lander.step(&report, "taken", line, notices)?;
    let main = lander.main.clone();
    let mut chain = Chain::new(&main, &batch.head);
    let candidates = onto_head(lander, &mut report, &chain, items, notices)?;
    let by_id: HashMap<i64, LandItem> = candidates.iter().map(|i| (i.id, i.clone())).collect();
    let mut bisection = Bisection::new(candidates.iter().map(|i| i.id).collect());
    let mut red_verdicts: HashMap<i64, Verdict> = HashMap::new();
    loop {
        match bisection.next() {
            Next::Test(n) => {
                let prefix: Vec<&LandItem> =
                    bisection.items()[..n].iter().map(|id| &by_id[id]).collect();
                let commits: Vec<String> = prefix.iter().map(|i| i.task_commit.clone()).collect();
                let commit = match chain.prefix(&commits)? {
                    Ok(commit) => commit,
                    Err(found) => {
                        let item = prefix[found.index];
                        let ahead = prefix[..found.index]
                            .iter()
                            .map(|i| i.slug.clone())
                            .collect();
                        send_back(
                            lander,
                            &mut report,
                            item,
                            conflict(item, found.files, ahead),
                            notices,
                        )?;
                        bisection.remove(found.index);
                        continue;
                    }
                };
                let slugs: Vec<String> = prefix.iter().map(|i| i.slug.clone()).collect();
                let verdict = judge(lander, &mut report, &commit, slugs, notices)?;
                if !verdict.green()
                    && let Some(last) = prefix.last()
                {
                    red_verdicts.insert(last.id, verdict.clone());
                }
                bisection.record(n, verdict.green());
            }
            Next::TestBase => {
                let verdict = judge(lander, &mut report, &batch.head, Vec::new(), notices)?;
                bisection.record_base(verdict.green());
            }
            Next::BaseRed => {
                report.outcome = "base-red".into();
                lander.store.land_finish(batch.id, false)?;
                let line = format!("the checks fail on {} itself: nothing lands", lander.base);
                lander.step(&report, "base-red", line, notices)?;
                return Ok(report);
            }
            Next::Land { land, culprits } => {
                for id in culprits {
                    let item = &by_id[&id];
                    let checks = red_verdicts.remove(&id).map(|v| v.failed);
                    let returned = Returned {
                        task: item.slug.clone(),
                        reason: "culprit".into(),
                        files: Vec::new(),
                        with: Vec::new(),
                        checks: checks.unwrap_or_default(),
                    };
                    send_back(lander, &mut report, item, returned, notices)?;
                }
                let landing: Vec<&LandItem> = land.iter().map(|id| &by_id[id]).collect();
                crate::ops::land::moving::land(lander, &mut chain, &mut report, &landing, notices)?;
                return Ok(report);
            }
        }
    }
}

/// Where the batch's checks run: in the sandbox of its first task, which all its tasks share.
fn batch_place(lander: &Lander<'_>, items: &[LandItem]) -> Result<CheckPlace> {
    let first = items
        .first()
        .ok_or_else(|| EngineError::invalid("an empty batch"))?;
    let task = lander
        .store
        .task(&first.slug)?
        .ok_or_else(|| EngineError::not_found(format!("no task {}", first.slug)))?;
    CheckPlace::of(lander.ws, &task, lander.scratch.dir())
}

/// The items that merge onto the head alone, in order; one the head has already is recorded
/// landed, one that conflicts is sent back.
fn onto_head(
    lander: &mut Lander<'_>,
    report: &mut BatchReport,
    chain: &Chain<'_>,
    items: Vec<LandItem>,
    notices: &mut dyn Notices,
) -> Result<Vec<LandItem>> {
    let mut candidates = Vec::new();
    for item in items {
        if base_has(&lander.main, &item.task_commit, &report.head)? {
            lander.store.land_already(item.id)?;
            report.landed.push(item.slug.clone());
            continue;
        }
        let files = chain.conflicts_with_head(&item.task_commit)?;
        if files.is_empty() {
            candidates.push(item);
        } else {
            let returned = conflict(&item, files, vec!["base".into()]);
            send_back(lander, report, &item, returned, notices)?;
        }
    }
    Ok(candidates)
}

fn conflict(item: &LandItem, files: Vec<String>, with: Vec<String>) -> Returned {
    Returned {
        task: item.slug.clone(),
        reason: "conflict".into(),
        files,
        with,
        checks: Vec::new(),
    }
}

/// Sends `item` back from the batch, recorded and journaled with why.
fn send_back(
    lander: &mut Lander<'_>,
    report: &mut BatchReport,
    item: &LandItem,
    returned: Returned,
    notices: &mut dyn Notices,
) -> Result<()> {
    let detail = serde_json::to_value(&returned)
        .map_err(|e| EngineError::environment("failed to write a land record", e))?;
    lander
        .store
        .land_return(item.id, &returned.reason, detail)?;
    let why = match returned.reason.as_str() {
        "conflict" => format!(
            "conflicts with {} in {}",
            returned.with.join(", "),
            returned.files.join(", ")
        ),
        _ => {
            let names: Vec<&str> = returned.checks.iter().map(|c| c.name.as_str()).collect();
            format!("breaks the checks ({})", names.join(", "))
        }
    };
    let line = format!("batch {}: {} sent back: {why}", report.batch, item.slug);
    report.returned.push(returned);
    lander.step(report, "sent-back", line, notices)
}

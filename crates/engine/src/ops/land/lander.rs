//! The lander: one per base branch at a time, however many run, on this host or others. It
//! holds the base's claim in the store (`land-HEX(BASE)`: a lock on SQLite, a lease on
//! PostgreSQL) while it works, settles first what a dead lander left (a batch whose recorded
//! tip the base has is landed, any other open batch is queued again), then takes batches
//! until the base's queue is empty. A base another lander holds is left to it; `--run`
//! returns once nothing is queued or under test.

use crate::base::error::{EngineError, Result};
use crate::base::notice::{Notice, Notices};
use crate::env::workspace::Workspace;
use crate::ops::land::batch::land_batch;
use crate::ops::land::checks::Scratch;
use crate::ops::land::context::Lander;
use crate::ops::land::fix::{fix_returned, follow_up};
use crate::ops::land::orphans::orphan_fixes;
use crate::ops::land::report::{BatchReport, DEFAULT_BATCH, FixRound};
use ganger_store::{LandItem, StoreError};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// How long a lander waits before it looks again at bases other landers hold.
const HELD_POLL: Duration = Duration::from_millis(300);

/// How often a lander with nothing queued looks at the fix rounds it sent.
const FIX_POLL: Duration = Duration::from_millis(200);

/// The name of the claim of the lander of `base`.
pub(crate) fn claim_name(base: &str) -> String {
    let hex: String = base.bytes().map(|b| format!("{b:02x}")).collect();
    format!("land-{hex}")
}

/// Lands every queued task, base by base, until nothing is queued or under test.
pub(crate) fn run(
    ws: &Workspace,
    batch: Option<u32>,
    commander: &str,
    notices: &mut dyn Notices,
) -> Result<Vec<BatchReport>> {
    let limit = batch.unwrap_or(DEFAULT_BATCH);
    let mut reports = Vec::new();
    let never = AtomicBool::new(false);
    loop {
        let pass = land_free_bases(ws, limit, commander, notices, &mut |_| false, &never)?;
        let red = pass.reports.iter().find(|b| b.outcome == "base-red");
        if let Some(red) = red {
            return Err(EngineError::invalid(format!(
                "the checks fail on {} itself; nothing lands until they pass",
                red.base
            ))
            .hint("`ganger land status` shows the last batch's check runs"));
        }
        reports.extend(pass.reports);
        if pass.bases == 0 {
            return Ok(reports);
        }
        if !pass.worked {
            std::thread::sleep(HELD_POLL);
        }
    }
}

/// What one look at the queue's bases did.
pub(crate) struct Pass {
    /// The bases with items queued or under test.
    pub bases: usize,
    /// Whether a base was free and landed here.
    pub worked: bool,
    pub reports: Vec<BatchReport>,
}

/// Lands the queue of each base that has one and that no other lander holds (nor `skip`
/// names), each until it is empty or its base's own checks fail (a `base-red` report, after
/// which that base is left). A lander waits for the fix rounds it sent to end, unless `stop`
/// is set: then they are left as a killed lander leaves them.
pub(crate) fn land_free_bases(
    ws: &Workspace,
    limit: u32,
    commander: &str,
    notices: &mut dyn Notices,
    skip: &mut dyn FnMut(&str) -> bool,
    stop: &AtomicBool,
) -> Result<Pass> {
    let store = ws.open_store()?;
    let mut bases = store.land_bases()?;
    // A base whose only business is a fix round a dead lander sent is a base to land too.
    for orphan in orphan_fixes(ws, &*store, None)? {
        if !bases.contains(&orphan.item.base) {
            bases.push(orphan.item.base);
        }
    }
    let mut pass = Pass {
        bases: bases.len(),
        worked: false,
        reports: Vec::new(),
    };
    for base in bases {
        if skip(&base) {
            continue;
        }
        let claim = match store.claim(&claim_name(&base)) {
            Ok(claim) => claim,
            Err(StoreError::ClaimHeld { .. }) => continue,
            Err(error) => return Err(error.into()),
        };
        pass.worked = true;
        let landed = land_base(ws, &base, limit, commander, &claim, notices, stop);
        claim.release();
        let done = landed?;
        let red = done.iter().any(|b| b.outcome == "base-red");
        pass.reports.extend(done);
        if red {
            return Ok(pass);
        }
    }
    Ok(pass)
}

/// Lands `base`'s queue, holding its claim, and follows up the fix rounds it sends.
fn land_base(
    ws: &Workspace,
    base: &str,
    limit: u32,
    commander: &str,
    claim: &ganger_store::Claim,
    notices: &mut dyn Notices,
    stop: &AtomicBool,
) -> Result<Vec<BatchReport>> {
    let main = ganger_git::discover(&ws.repo.main)?;
    let base_ref = format!("refs/heads/{base}");
    let head = main
        .resolve(&base_ref)
        .ok_or_else(|| EngineError::invalid(format!("the base {base} is not a local branch")))?;
    let dir = ws.state.root().join("land").join(claim_name(base));
    let scratch = Scratch::open(&main, &dir, &head)?;
    let mut lander = Lander {
        ws,
        store: ws.open_store()?,
        main,
        base: base.to_owned(),
        commander: commander.to_owned(),
        scratch,
        place: None,
        checks: ws.config.checks.clone(),
        mode: ws.config.land.mode,
        claim,
    };
    settle_dead(&mut lander, notices)?;
    let landed = land_queue(ws, &mut lander, limit, stop, notices);
    if let Some(place) = lander.place.take() {
        place.release(ws);
    }
    landed
}

/// Lands the base's queue batch by batch, following up the fix rounds it sends, until the
/// queue is empty (and the fix rounds ended, unless `stop`) or the base's own checks fail.
fn land_queue(
    ws: &Workspace,
    lander: &mut Lander<'_>,
    limit: u32,
    stop: &AtomicBool,
    notices: &mut dyn Notices,
) -> Result<Vec<BatchReport>> {
    let base = lander.base.clone();
    let base = base.as_str();
    let base_ref = format!("refs/heads/{base}");
    let mut reports: Vec<BatchReport> = Vec::new();
    let mut fixing: Vec<Fixing> = orphan_fixes(ws, &*lander.store, Some(base))?
        .into_iter()
        .map(|orphan| {
            notices.notice(Notice::Land {
                base: base.to_owned(),
                message: format!(
                    "{}'s fix round {} was sent by a lander that is gone: followed up here",
                    orphan.item.slug, orphan.round
                ),
            });
            Fixing {
                item: orphan.item,
                round: orphan.round,
                report: None,
            }
        })
        .collect();
    loop {
        follow_fixes(ws, lander, &mut fixing, &mut reports, notices)?;
        let head = lander
            .main
            .resolve(&base_ref)
            .ok_or_else(|| EngineError::invalid(format!("the base {base} is gone")))?;
        let Some((batch, items)) =
            lander
                .store
                .land_take_batch(base, &head, lander.claim.key(), limit)?
        else {
            if fixing.is_empty() || stop.load(Ordering::Relaxed) {
                return Ok(reports);
            }
            // Fix rounds still run: their tasks may be queued again.
            std::thread::sleep(FIX_POLL);
            continue;
        };
        let wants_fix: Vec<LandItem> = items.iter().filter(|i| i.fix).cloned().collect();
        let mut report = land_batch(lander, &batch, items, notices)?;
        for returned in report.returned.clone() {
            if let Some(item) = wants_fix.iter().find(|i| i.slug == returned.task) {
                let round = fix_returned(ws, &mut *lander.store, item, &returned, notices)?;
                report.fix_rounds.push(FixRound {
                    task: item.slug.clone(),
                    round,
                    passed: false,
                    requeued: false,
                });
                if let Some(round) = round {
                    fixing.push(Fixing {
                        item: item.clone(),
                        round,
                        report: Some(reports.len()),
                    });
                }
            }
        }
        let red = report.outcome == "base-red";
        reports.push(report);
        if red {
            return Ok(reports);
        }
    }
}

/// A fix round sent by this lander (or adopted from one that is gone), running: the item it
/// fixes, the round, and the report of the batch that sent it back (none when adopted).
struct Fixing {
    item: LandItem,
    round: u32,
    report: Option<usize>,
}

/// Follows up the fix rounds that ended: each one's task is queued again if it passed, and its
/// batch's report says how it went.
fn follow_fixes(
    ws: &Workspace,
    lander: &mut Lander<'_>,
    fixing: &mut Vec<Fixing>,
    reports: &mut [BatchReport],
    notices: &mut dyn Notices,
) -> Result<()> {
    let mut still = Vec::new();
    for each in fixing.drain(..) {
        match follow_up(ws, &mut *lander.store, &each.item, each.round)? {
            None => still.push(each),
            Some(done) => {
                let requeued = if done.requeued {
                    "queued again"
                } else {
                    "left sent back"
                };
                notices.notice(Notice::Land {
                    base: lander.base.clone(),
                    message: format!(
                        "{}'s fix round {} {}: {requeued}",
                        done.task,
                        each.round,
                        if done.passed {
                            "passed"
                        } else {
                            "did not pass"
                        },
                    ),
                });
                if let Some(entry) = each.report.and_then(|i| reports.get_mut(i)).and_then(|r| {
                    r.fix_rounds
                        .iter_mut()
                        .find(|f| f.task == done.task && f.round == done.round)
                }) {
                    *entry = done;
                }
            }
        }
    }
    *fixing = still;
    Ok(())
}

/// Settles the batches a dead lander of this base left open.
fn settle_dead(lander: &mut Lander<'_>, notices: &mut dyn Notices) -> Result<()> {
    let base_ref = format!("refs/heads/{}", lander.base);
    for batch in lander.store.land_open_batches(&lander.base)? {
        let head = lander.main.resolve(&base_ref);
        let landed = match (&batch.tip, head) {
            (Some(tip), Some(head)) if batch.state == "landing" => {
                lander.main.is_ancestor(tip, &head)?
            }
            _ => false,
        };
        lander.store.land_finish(batch.id, landed)?;
        let step = if landed {
            "recovered-landed"
        } else {
            "recovered-requeued"
        };
        let detail = serde_json::json!({ "batch": batch.id, "base": lander.base, "step": step });
        lander.store.land_step(&lander.commander, detail)?;
        notices.notice(Notice::Land {
            base: lander.base.clone(),
            message: if landed {
                format!(
                    "batch {} of a lander that died had landed; recorded",
                    batch.id
                )
            } else {
                format!(
                    "batch {} of a lander that died had not landed; its tasks are queued again",
                    batch.id
                )
            },
        });
    }
    Ok(())
}

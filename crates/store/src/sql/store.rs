//! [`Store`] for both backends: tasks, their rounds and the journal. Every change that reads
//! before it writes is one transaction under the write lock; a round's own writes (its host,
//! its agent, its progress, its end) carry the fence of its claim ([`Database::fence`]), and
//! only act on a round that is still running, so that a host finishing and an observer
//! settling a dead host can never both win.

use super::rounds::{ROUND_COLUMNS, insert_round, load_round, refuse_busy, round, round_of};
use super::tasks::{TASK_SUMMARIES, insert_task, load_task, task_by_slug, task_summary};
use super::{Database, Fence, Param, Sql, bind, journal};
use crate::error::StoreError;
use crate::journal::{JournalEntry, JournalEvent};
use crate::records::{
    Move, NewRound, NewTask, ProcessRef, Rewind, Round, RoundEnd, Task, TaskSummary, TaskUpdate,
    now_ms,
};
use crate::store::Store;
use ganger_events::{RoundStatus, RoundSummary};
use std::path::Path;

/// `params` followed by the fence's.
fn fenced<'a>(params: impl IntoIterator<Item = Param<'a>>, fence: &Fence) -> Vec<Param<'a>> {
    params
        .into_iter()
        .chain(fence.params.iter().cloned())
        .collect()
}

/// The checks a round a commander sends must pass: the generation it was sent under is the
/// task's, and the commander is let in.
fn admit(task: &Task, round: &NewRound) -> Result<(), StoreError> {
    let Some(sent) = round.generation else {
        return Ok(());
    };
    if sent != task.generation {
        return Err(StoreError::Stale {
            slug: task.slug.clone(),
            sent,
            now: task.generation,
            owner: task.owner.clone(),
        });
    }
    if !task.admits(&round.commander) {
        return Err(StoreError::NotAllowed {
            slug: task.slug.clone(),
            commander: round.commander.clone(),
            owner: task.owner.clone(),
        });
    }
    Ok(())
}

/// Applies a fix's changes to its task.
fn update_task(sql: &mut dyn Sql, task: &Task, update: &TaskUpdate) -> Result<(), StoreError> {
    if let Some(model) = &update.model {
        sql.execute(
            "UPDATE tasks SET model = ?2 WHERE id = ?1",
            &bind![task.id, model],
        )?;
    }
    if update.new_session {
        sql.execute(
            "UPDATE tasks SET session = NULL WHERE id = ?1",
            &bind![task.id],
        )?;
    }
    if !update.keys.is_empty() {
        let mut keys = task.keys.clone();
        keys.extend(update.keys.clone());
        sql.execute(
            "UPDATE tasks SET keys = ?2 WHERE id = ?1",
            &[Param::from(task.id), Param::json(&keys)?],
        )?;
    }
    Ok(())
}

/// Ends a running round as `end` says, with its task and journal entry; false when it had
/// ended already (or its claim was lost: `fence`).
fn end_round(
    sql: &mut dyn Sql,
    round_id: i64,
    end: &RoundEnd,
    fence: &Fence,
) -> Result<bool, StoreError> {
    // What the journal needs comes back with the change: one round trip fewer under the lock.
    let ended: Option<(i64, u32, String)> = sql.first(
        &format!(
            "UPDATE rounds SET status = ?2, reason = ?3, session = ?4, exit_code = ?5, \
             exit_signal = ?6, summary = ?7, snapshot_after = ?8, changed = ?9, ended_at = ?10, \
             worktree_changes = ?11, snapshot_before = COALESCE(?12, snapshot_before), \
             checks = CASE WHEN ?13 = '[]' THEN checks ELSE ?13 END \
             WHERE id = ?1 AND status = 'running'{} \
             RETURNING task_id, number, commander",
            fence.condition
        ),
        &fenced(
            [
                Param::from(round_id),
                Param::from(end.status.as_str()),
                Param::from(end.reason.as_deref()),
                Param::from(end.session.as_deref()),
                Param::from(end.exit_code),
                Param::from(end.exit_signal),
                Param::json(&end.summary)?,
                Param::from(end.snapshot_after.as_deref()),
                Param::json(&end.changed)?,
                Param::from(now_ms()),
                Param::json(&end.worktree_changes)?,
                Param::from(end.snapshot_before.as_deref()),
                Param::json(&end.checks)?,
            ],
            fence,
        ),
        |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
    )?;
    let Some((task_id, number, commander)) = ended else {
        return Ok(false);
    };
    sql.execute(
        "UPDATE tasks SET last_status = ?2, cost_usd = cost_usd + ?3, \
         session = COALESCE(session, ?4) WHERE id = ?1",
        &bind![
            task_id,
            end.status.as_str(),
            end.summary.cost_usd.unwrap_or(0.0),
            end.session.as_deref(),
        ],
    )?;
    let finished = JournalEvent::RoundFinished {
        status: end.status,
        reason: end.reason.clone(),
        done: end.summary.done.clone(),
    };
    journal::append(sql, task_id, Some(number), Some(&commander), &finished)?;
    Ok(true)
}

/// Takes the task back to after round `to` (see [`Store::rewind`]).
fn rewind_task(
    sql: &mut dyn Sql,
    task_id: i64,
    to: u32,
    rewind: &Rewind,
) -> Result<Vec<u32>, StoreError> {
    let task = load_task(sql, task_id)?;
    refuse_busy(sql, task_id, &task.slug)?;
    let mut marked: Vec<u32> = sql.rows(
        "UPDATE rounds SET rewound = TRUE WHERE task_id = ?1 AND number > ?2 AND NOT rewound \
         RETURNING number",
        &bind![task_id, to],
        |row| row.get(0),
    )?;
    marked.sort_unstable();
    sql.execute(
        "UPDATE tasks SET session = ?2, resume_note = ?3, fork_from = ?5, \
         last_status = (SELECT status FROM rounds WHERE task_id = ?1 AND number = ?4) \
         WHERE id = ?1",
        &[
            Param::from(task_id),
            Param::from(rewind.session.as_deref()),
            Param::from(rewind.resume_note.as_deref()),
            Param::from(to),
            rewind
                .fork_from
                .as_ref()
                .map(Param::json)
                .transpose()?
                .unwrap_or(Param::Null),
        ],
    )?;
    let mut detail = rewind.detail.clone();
    if let Some(object) = detail.as_object_mut() {
        object.insert("to".into(), to.into());
        object.insert("rewound".into(), serde_json::json!(marked));
    }
    let rewound = JournalEvent::Rewound(detail);
    journal::append(sql, task_id, Some(to), Some(&rewind.commander), &rewound)?;
    Ok(marked)
}

impl<D: Database> Store for D {
    fn create_task(
        &mut self,
        task: &NewTask,
        round: &NewRound,
    ) -> Result<(Task, Round), StoreError> {
        let db: &Self = self;
        let stored = db.write(|sql| {
            db.refuse_lost(sql, &round.claim)?;
            let task_id = insert_task(sql, task)?;
            let round_id = insert_round(sql, task_id, &task.slug, round)?;
            Ok((load_task(sql, task_id)?, load_round(sql, round_id)?))
        })?;
        crate::faults::answer_lost("create_task")?;
        Ok(stored)
    }

    fn begin_round(
        &mut self,
        task_id: i64,
        round: &NewRound,
        update: &TaskUpdate,
    ) -> Result<Round, StoreError> {
        let db: &Self = self;
        let stored = db.write(|sql| {
            db.refuse_lost(sql, &round.claim)?;
            let task = load_task(sql, task_id)?;
            admit(&task, round)?;
            super::claims::refuse_cleaning(sql, task_id, &task.slug)?;
            let round_id = insert_round(sql, task_id, &task.slug, round)?;
            update_task(sql, &task, update)?;
            load_round(sql, round_id)
        })?;
        crate::faults::answer_lost("begin_round")?;
        Ok(stored)
    }

    fn record_host(&mut self, round_id: i64, host: ProcessRef) -> Result<(), StoreError> {
        let fence = self.fence("rounds.lock_path", 4);
        let statement = format!(
            "UPDATE rounds SET host_pid = ?2, host_start = ?3 WHERE id = ?1{}",
            fence.condition
        );
        let params = fenced(bind![round_id, host.pid, host.start_ticks], &fence);
        self.again_if_cut(|sql| sql.execute(&statement, &params))?;
        Ok(())
    }

    fn record_agent(
        &mut self,
        round_id: i64,
        agent: ProcessRef,
        cgroup: Option<&Path>,
        session: Option<&str>,
    ) -> Result<(), StoreError> {
        let fence = self.fence("rounds.lock_path", 6);
        let statement = format!(
            "UPDATE rounds SET agent_pid = ?2, agent_start = ?3, cgroup = ?4, \
             session = COALESCE(?5, session) WHERE id = ?1{}",
            fence.condition
        );
        let params = fenced(
            bind![round_id, agent.pid, agent.start_ticks, cgroup, session],
            &fence,
        );
        self.again_if_cut(|sql| sql.execute(&statement, &params))?;
        Ok(())
    }

    fn record_progress(
        &mut self,
        round_id: i64,
        summary: &RoundSummary,
        progress_at: i64,
    ) -> Result<(), StoreError> {
        let fence = self.fence("rounds.lock_path", 4);
        let statement = format!(
            "UPDATE rounds SET summary = ?2, progress_at = ?3 \
             WHERE id = ?1 AND status = 'running'{}",
            fence.condition
        );
        let params = fenced(
            [
                Param::from(round_id),
                Param::json(summary)?,
                Param::from(progress_at),
            ],
            &fence,
        );
        self.again_if_cut(|sql| sql.execute(&statement, &params))?;
        Ok(())
    }

    fn finish_round(&mut self, round_id: i64, end: &RoundEnd) -> Result<bool, StoreError> {
        debug_assert!(end.status != RoundStatus::Running);
        let fence = self.fence("rounds.lock_path", 14);
        self.write(|sql| end_round(sql, round_id, end, &fence))
    }

    fn mark_cleaned(
        &mut self,
        task_id: i64,
        commander: &str,
        detail: serde_json::Value,
    ) -> Result<(), StoreError> {
        self.write(|sql| {
            sql.execute(
                "UPDATE tasks SET cleaned_at = ?2 WHERE id = ?1",
                &bind![task_id, now_ms()],
            )?;
            sql.execute(
                "DELETE FROM task_cleaning WHERE task_id = ?1",
                &bind![task_id],
            )?;
            let cleaned = JournalEvent::Cleaned(detail);
            journal::append(sql, task_id, None, Some(commander), &cleaned)?;
            Ok(())
        })
    }

    fn move_worktree(&mut self, task_id: i64, moved: &Move) -> Result<(), StoreError> {
        self.write(|sql| {
            sql.execute(
                "UPDATE tasks SET worktree = ?2, worktree_made = TRUE WHERE id = ?1",
                &bind![task_id, &moved.worktree],
            )?;
            if let Some(note) = &moved.resume_note {
                sql.execute(
                    "UPDATE tasks SET session = NULL, fork_from = NULL, resume_note = ?2 \
                     WHERE id = ?1",
                    &bind![task_id, note],
                )?;
            }
            let event = JournalEvent::Moved(moved.detail.clone());
            journal::append(sql, task_id, None, Some(&moved.commander), &event)?;
            Ok(())
        })
    }

    fn rewind(&mut self, task_id: i64, to: u32, rewind: &Rewind) -> Result<Vec<u32>, StoreError> {
        self.write(|sql| rewind_task(sql, task_id, to, rewind))
    }

    fn record_merge(
        &mut self,
        task_id: i64,
        commander: &str,
        detail: serde_json::Value,
    ) -> Result<(), StoreError> {
        let merged = JournalEvent::Merged(detail);
        self.on_conn(|sql| journal::append(sql, task_id, None, Some(commander), &merged))?;
        Ok(())
    }

    fn request_cancel(&mut self, round_id: i64, commander: &str) -> Result<bool, StoreError> {
        self.write(|sql| {
            let asked: Option<(i64, u32)> = sql.first(
                "UPDATE rounds SET cancel_requested = TRUE WHERE id = ?1 AND status = 'running' \
                 RETURNING task_id, number",
                &bind![round_id],
                |row| Ok((row.get(0)?, row.get(1)?)),
            )?;
            let Some((task_id, number)) = asked else {
                return Ok(false);
            };
            let asked = JournalEvent::CancelRequested {};
            journal::append(sql, task_id, Some(number), Some(commander), &asked)?;
            Ok(true)
        })
    }

    fn task(&self, slug: &str) -> Result<Option<Task>, StoreError> {
        self.again_if_cut(|sql| task_by_slug(sql, slug))
    }

    fn task_summaries(&self) -> Result<Vec<TaskSummary>, StoreError> {
        self.on_conn(|sql| sql.rows(TASK_SUMMARIES, &[], task_summary))
    }

    fn round(&self, task_id: i64, number: Option<u32>) -> Result<Option<Round>, StoreError> {
        self.again_if_cut(|sql| round_of(sql, task_id, number))
    }

    fn rounds(&self, task_id: i64) -> Result<Vec<Round>, StoreError> {
        self.on_conn(|sql| {
            sql.rows(
                &format!("SELECT {ROUND_COLUMNS} FROM rounds WHERE task_id = ?1 ORDER BY number"),
                &bind![task_id],
                round,
            )
        })
    }

    fn running_rounds(&self) -> Result<Vec<(Task, Round)>, StoreError> {
        self.on_conn(|sql| {
            let rounds = sql.rows(
                &format!("SELECT {ROUND_COLUMNS} FROM rounds WHERE status = 'running' ORDER BY id"),
                &[],
                round,
            )?;
            with_tasks(sql, rounds)
        })
    }

    fn journal(&self, after: i64, limit: u32) -> Result<Vec<JournalEntry>, StoreError> {
        self.on_conn(|sql| journal::page(sql, after, limit))
    }
}

/// Each round with its task.
pub(crate) fn with_tasks(
    sql: &mut dyn Sql,
    rounds: Vec<Round>,
) -> Result<Vec<(Task, Round)>, StoreError> {
    rounds
        .into_iter()
        .map(|round| Ok((load_task(sql, round.task_id)?, round)))
        .collect()
}

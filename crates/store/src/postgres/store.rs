//! The PostgreSQL side of [`Store`]: tasks, rounds and the journal, each change one
//! transaction under the write lock, as SQLite's are under `BEGIN IMMEDIATE`.

use super::conn::Query;
use super::fence::still_held;
use super::rows::{self, JOURNAL_COLUMNS, ROUND_COLUMNS, TASK_COLUMNS};
use super::{
    PgStore, big, insert_round, insert_task, journal, load_round, load_task, path_text,
    running_round, to_json, write,
};
use crate::error::StoreError;
use crate::records::{
    JournalEntry, Move, NewRound, NewTask, ProcessRef, Rewind, Round, RoundEnd, Task, TaskSummary,
    TaskUpdate, now_ms,
};
use crate::store::Store;
use ganger_events::{RoundStatus, RoundSummary};
use std::path::Path;

impl Store for PgStore {
    fn create_task(
        &mut self,
        task: &NewTask,
        round: &NewRound,
    ) -> Result<(Task, Round), StoreError> {
        let mut conn = self.conn()?;
        let mut tx = write(&mut conn)?;
        self.refuse_lost(&mut tx, &round.claim)?;
        let task_id = insert_task(&mut tx, task)?;
        let round_id = insert_round(&mut tx, task_id, &task.slug, round)?;
        let stored_task = load_task(&mut tx, task_id)?;
        let stored_round = load_round(&mut tx, round_id)?;
        tx.commit()?;
        crate::faults::answer_lost("create_task")?;
        Ok((stored_task, stored_round))
    }

    fn begin_round(
        &mut self,
        task_id: i64,
        round: &NewRound,
        update: &TaskUpdate,
    ) -> Result<Round, StoreError> {
        let mut conn = self.conn()?;
        let mut tx = write(&mut conn)?;
        self.refuse_lost(&mut tx, &round.claim)?;
        let task = load_task(&mut tx, task_id)?;
        if let Some(sent) = round.generation {
            if sent != task.generation {
                return Err(StoreError::Stale {
                    slug: task.slug,
                    sent,
                    now: task.generation,
                    owner: task.owner,
                });
            }
            if !task.admits(&round.commander) {
                return Err(StoreError::NotAllowed {
                    slug: task.slug,
                    commander: round.commander.clone(),
                    owner: task.owner,
                });
            }
        }
        super::claims::refuse_cleaning(&mut tx, task_id, &task.slug)?;
        let round_id = insert_round(&mut tx, task_id, &task.slug, round)?;
        if let Some(model) = &update.model {
            tx.execute(
                "UPDATE tasks SET model = $2 WHERE id = $1",
                &[&task_id, model],
            )?;
        }
        if update.new_session {
            tx.execute("UPDATE tasks SET session = NULL WHERE id = $1", &[&task_id])?;
        }
        if !update.keys.is_empty() {
            let mut keys = task.keys.clone();
            keys.extend(update.keys.clone());
            tx.execute(
                "UPDATE tasks SET keys = $2 WHERE id = $1",
                &[&task_id, &to_json(&keys)?],
            )?;
        }
        let stored = load_round(&mut tx, round_id)?;
        tx.commit()?;
        crate::faults::answer_lost("begin_round")?;
        Ok(stored)
    }

    fn record_host(&mut self, round_id: i64, host: ProcessRef) -> Result<(), StoreError> {
        let (names, fences) = self.pool.fences.arrays();
        let sql = format!(
            "UPDATE rounds SET host_pid = $2, host_start = $3 WHERE id = $1 AND {}",
            still_held("rounds.lock_path", "$4", "$5")
        );
        self.pool.write_twice_if_cut(|conn, _| {
            conn.execute(
                &sql,
                &[
                    &round_id,
                    &i64::from(host.pid),
                    &big(host.start_ticks),
                    &names,
                    &fences,
                ],
            )
        })?;
        Ok(())
    }

    fn record_agent(
        &mut self,
        round_id: i64,
        agent: ProcessRef,
        cgroup: Option<&Path>,
        session: Option<&str>,
    ) -> Result<(), StoreError> {
        let (names, fences) = self.pool.fences.arrays();
        let sql = format!(
            "UPDATE rounds SET agent_pid = $2, agent_start = $3, cgroup = $4, \
             session = COALESCE($5, session) WHERE id = $1 AND {}",
            still_held("rounds.lock_path", "$6", "$7")
        );
        let cgroup = cgroup.map(path_text);
        self.pool.write_twice_if_cut(|conn, _| {
            conn.execute(
                &sql,
                &[
                    &round_id,
                    &i64::from(agent.pid),
                    &big(agent.start_ticks),
                    &cgroup,
                    &session,
                    &names,
                    &fences,
                ],
            )
        })?;
        Ok(())
    }

    fn record_progress(
        &mut self,
        round_id: i64,
        summary: &RoundSummary,
        progress_at: i64,
    ) -> Result<(), StoreError> {
        let (names, fences) = self.pool.fences.arrays();
        let sql = format!(
            "UPDATE rounds SET summary = $2, progress_at = $3 \
             WHERE id = $1 AND status = 'running' AND {}",
            still_held("rounds.lock_path", "$4", "$5")
        );
        let summary = to_json(summary)?;
        self.pool.write_twice_if_cut(|conn, _| {
            conn.execute(&sql, &[&round_id, &summary, &progress_at, &names, &fences])
        })?;
        Ok(())
    }

    fn finish_round(&mut self, round_id: i64, end: &RoundEnd) -> Result<bool, StoreError> {
        debug_assert!(end.status != RoundStatus::Running);
        let (names, fences) = self.pool.fences.arrays();
        let mut conn = self.conn()?;
        let mut tx = write(&mut conn)?;
        // What the journal needs comes back with the change: one round trip fewer under the lock.
        let ended = tx.query_opt(
            &format!(
                "UPDATE rounds SET status = $2, reason = $3, session = $4, exit_code = $5, exit_signal = $6, \
                 summary = $7, snapshot_after = $8, changed = $9, ended_at = $10, worktree_changes = $11, \
                 snapshot_before = COALESCE($12, snapshot_before), \
                 checks = CASE WHEN $13 = '[]' THEN checks ELSE $13 END \
                 WHERE id = $1 AND status = 'running' AND {} \
                 RETURNING task_id, number, commander",
                still_held("rounds.lock_path", "$14", "$15")
            ),
            &[
                &round_id,
                &end.status.as_str(),
                &end.reason,
                &end.session,
                &end.exit_code.map(i64::from),
                &end.exit_signal.map(i64::from),
                &to_json(&end.summary)?,
                &end.snapshot_after,
                &to_json(&end.changed)?,
                &now_ms(),
                &to_json(&end.worktree_changes)?,
                &end.snapshot_before,
                &to_json(&end.checks)?,
                &names,
                &fences,
            ],
        )?;
        let Some(row) = ended else {
            return Ok(false);
        };
        let task_id: i64 = row.try_get(0)?;
        let number: u32 = rows::narrow(row.try_get(1)?, "number")?;
        let commander: String = row.try_get(2)?;
        tx.execute(
            "UPDATE tasks SET last_status = $2, cost_usd = cost_usd + $3, \
             session = COALESCE(session, $4) WHERE id = $1",
            &[
                &task_id,
                &end.status.as_str(),
                &end.summary.cost_usd.unwrap_or(0.0),
                &end.session,
            ],
        )?;
        journal(
            &mut tx,
            task_id,
            Some(number),
            "round-finished",
            Some(&commander),
            serde_json::json!({
                "status": end.status.as_str(),
                "reason": end.reason,
                "done": end.summary.done,
            }),
        )?;
        tx.commit()?;
        Ok(true)
    }

    fn mark_cleaned(
        &mut self,
        task_id: i64,
        commander: &str,
        detail: serde_json::Value,
    ) -> Result<(), StoreError> {
        let mut conn = self.conn()?;
        let mut tx = write(&mut conn)?;
        tx.execute(
            "UPDATE tasks SET cleaned_at = $2 WHERE id = $1",
            &[&task_id, &now_ms()],
        )?;
        tx.execute("DELETE FROM task_cleaning WHERE task_id = $1", &[&task_id])?;
        journal(&mut tx, task_id, None, "cleaned", Some(commander), detail)?;
        tx.commit()?;
        Ok(())
    }

    fn move_worktree(&mut self, task_id: i64, moved: &Move) -> Result<(), StoreError> {
        let mut conn = self.conn()?;
        let mut tx = write(&mut conn)?;
        tx.execute(
            "UPDATE tasks SET worktree = $2, worktree_made = TRUE WHERE id = $1",
            &[&task_id, &path_text(&moved.worktree)],
        )?;
        if let Some(note) = &moved.resume_note {
            tx.execute(
                "UPDATE tasks SET session = NULL, fork_from = NULL, resume_note = $2 \
                 WHERE id = $1",
                &[&task_id, note],
            )?;
        }
        journal(
            &mut tx,
            task_id,
            None,
            "moved",
            Some(&moved.commander),
            moved.detail.clone(),
        )?;
        tx.commit()?;
        Ok(())
    }

    fn rewind(&mut self, task_id: i64, to: u32, rewind: &Rewind) -> Result<Vec<u32>, StoreError> {
        let mut conn = self.conn()?;
        let mut tx = write(&mut conn)?;
        let task = load_task(&mut tx, task_id)?;
        if let Some((number, host_pid)) = running_round(&mut tx, task_id)? {
            return Err(StoreError::Busy {
                slug: task.slug,
                number,
                host_pid,
            });
        }
        let mut marked = tx
            .query(
                "UPDATE rounds SET rewound = TRUE WHERE task_id = $1 AND number > $2 \
                 AND NOT rewound RETURNING number",
                &[&task_id, &i64::from(to)],
            )?
            .iter()
            .map(|row| rows::narrow::<u32>(row.try_get(0)?, "number"))
            .collect::<Result<Vec<_>, _>>()?;
        marked.sort_unstable();
        tx.execute(
            "UPDATE tasks SET session = $2, resume_note = $3, fork_from = $5, \
             last_status = (SELECT status FROM rounds WHERE task_id = $1 AND number = $4) \
             WHERE id = $1",
            &[
                &task_id,
                &rewind.session,
                &rewind.resume_note,
                &i64::from(to),
                &rewind.fork_from.as_ref().map(to_json).transpose()?,
            ],
        )?;
        let mut detail = rewind.detail.clone();
        if let Some(object) = detail.as_object_mut() {
            object.insert("to".into(), to.into());
            object.insert("rewound".into(), serde_json::json!(marked));
        }
        journal(
            &mut tx,
            task_id,
            Some(to),
            "rewound",
            Some(&rewind.commander),
            detail,
        )?;
        tx.commit()?;
        Ok(marked)
    }

    fn record_merge(
        &mut self,
        task_id: i64,
        commander: &str,
        detail: serde_json::Value,
    ) -> Result<(), StoreError> {
        journal(
            &mut *self.conn()?,
            task_id,
            None,
            "merged",
            Some(commander),
            detail,
        )?;
        Ok(())
    }

    fn request_cancel(&mut self, round_id: i64, commander: &str) -> Result<bool, StoreError> {
        let mut conn = self.conn()?;
        let mut tx = write(&mut conn)?;
        let found = tx.query_opt(
            "UPDATE rounds SET cancel_requested = TRUE WHERE id = $1 AND status = 'running' \
             RETURNING task_id, number",
            &[&round_id],
        )?;
        let Some(row) = found else {
            return Ok(false);
        };
        let task_id: i64 = row.try_get(0)?;
        let number: u32 = rows::narrow(row.try_get(1)?, "number")?;
        journal(
            &mut tx,
            task_id,
            Some(number),
            "cancel-requested",
            Some(commander),
            serde_json::json!({}),
        )?;
        tx.commit()?;
        Ok(true)
    }

    fn task(&self, slug: &str) -> Result<Option<Task>, StoreError> {
        self.twice(|conn| {
            conn.query_opt(
                &format!("SELECT {TASK_COLUMNS} FROM tasks WHERE slug = $1"),
                &[&slug],
            )?
            .as_ref()
            .map(rows::task)
            .transpose()
        })
    }

    fn task_summaries(&self) -> Result<Vec<TaskSummary>, StoreError> {
        let found = self.conn()?.query(
            "SELECT slug, agent, model, session, owner, worktree, rounds, last_status, cost_usd \
             FROM tasks ORDER BY slug",
            &[],
        )?;
        rows::all(found, rows::task_summary)
    }

    fn round(&self, task_id: i64, number: Option<u32>) -> Result<Option<Round>, StoreError> {
        self.twice(|conn| round_of(conn, task_id, number))
    }

    fn rounds(&self, task_id: i64) -> Result<Vec<Round>, StoreError> {
        let found = self.conn()?.query(
            &format!("SELECT {ROUND_COLUMNS} FROM rounds WHERE task_id = $1 ORDER BY number"),
            &[&task_id],
        )?;
        rows::all(found, rows::round)
    }

    fn running_rounds(&self) -> Result<Vec<(Task, Round)>, StoreError> {
        let mut conn = self.conn()?;
        let found = conn.query(
            &format!("SELECT {ROUND_COLUMNS} FROM rounds WHERE status = 'running' ORDER BY id"),
            &[],
        )?;
        let rounds = rows::all(found, rows::round)?;
        rounds
            .into_iter()
            .map(|round| Ok((load_task(&mut *conn, round.task_id)?, round)))
            .collect()
    }

    fn journal(&self, after: i64, limit: u32) -> Result<Vec<JournalEntry>, StoreError> {
        let found = self.conn()?.query(
            &format!(
                "SELECT {JOURNAL_COLUMNS} FROM journal j LEFT JOIN tasks t ON t.id = j.task_id \
                 WHERE j.id > $1 ORDER BY j.id LIMIT $2"
            ),
            &[&after, &i64::from(limit)],
        )?;
        rows::all(found, rows::journal_entry)
    }
}

impl PgStore {
    /// [`StoreError::ClaimLost`] when this process held `claim` and its lease ran out: a round
    /// whose claim was lost before it was recorded is not recorded (whoever saw the claim
    /// dead may have settled its start already).
    fn refuse_lost(
        &self,
        tx: &mut impl Query,
        claim: &crate::liveness::ClaimKey,
    ) -> Result<(), StoreError> {
        let (names, fences) = self.pool.fences.arrays();
        let held: bool = tx
            .query_one(
                &format!("SELECT {}", still_held("$1", "$2", "$3")),
                &[&claim.as_str(), &names, &fences],
            )?
            .try_get(0)?;
        if held {
            Ok(())
        } else {
            Err(StoreError::ClaimLost {
                name: claim.as_str().to_owned(),
            })
        }
    }
}

/// Round `number` of the task (its last with `None`).
fn round_of(
    conn: &mut super::conn::Conn,
    task_id: i64,
    number: Option<u32>,
) -> Result<Option<Round>, StoreError> {
    let found = match number {
        Some(number) => conn.query_opt(
            &format!("SELECT {ROUND_COLUMNS} FROM rounds WHERE task_id = $1 AND number = $2"),
            &[&task_id, &i64::from(number)],
        )?,
        None => conn.query_opt(
            &format!(
                "SELECT {ROUND_COLUMNS} FROM rounds WHERE task_id = $1 ORDER BY number DESC LIMIT 1"
            ),
            &[&task_id],
        )?,
    };
    found.as_ref().map(rows::round).transpose()
}

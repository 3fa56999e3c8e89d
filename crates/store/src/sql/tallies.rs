//! [`TallyStore`] for both backends: one grouped query over the rounds and their tasks.

use super::Database;
use super::tasks::status;
use crate::error::StoreError;
use crate::tallies::{RoundTally, TallyStore};
use std::fmt::Write;

impl<D: Database> TallyStore for D {
    fn round_tallies(&self, bounds_ms: &[u64]) -> Result<Vec<RoundTally>, StoreError> {
        // The bounds are numbers of ours, written into the statement (not a user's text); a
        // duration is summed as BIGINT in both dialects (PostgreSQL's SUM of BIGINT is
        // NUMERIC otherwise).
        let mut buckets = String::new();
        for bound in bounds_ms {
            let _ = write!(
                buckets,
                ", SUM(CASE WHEN r.ended_at IS NOT NULL AND r.ended_at - r.started_at <= {bound} \
                 THEN 1 ELSE 0 END)"
            );
        }
        let query = format!(
            "SELECT t.agent, r.status, COUNT(*), \
             SUM(CASE WHEN r.ended_at IS NULL THEN 0 ELSE 1 END), \
             CAST(COALESCE(SUM(CASE WHEN r.ended_at IS NULL THEN 0 \
             ELSE r.ended_at - r.started_at END), 0) AS BIGINT){buckets} \
             FROM rounds r JOIN tasks t ON t.id = r.task_id \
             GROUP BY t.agent, r.status ORDER BY t.agent, r.status"
        );
        let count = |value: i64| u64::try_from(value).unwrap_or(0);
        self.on_conn(|sql| {
            sql.rows(&query, &[], |row| {
                let within = (0..bounds_ms.len())
                    .map(|at| Ok(count(row.get::<i64>(5 + at)?)))
                    .collect::<Result<_, StoreError>>()?;
                Ok(RoundTally {
                    agent: row.get(0)?,
                    status: status(&row.get::<String>(1)?)?,
                    rounds: count(row.get(2)?),
                    ended: count(row.get(3)?),
                    duration_ms: count(row.get(4)?),
                    within,
                })
            })
        })
    }
}

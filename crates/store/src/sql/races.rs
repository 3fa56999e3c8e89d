//! [`RaceStore`] for both backends: the `races` and `race_verdicts` tables.

use super::{Database, Param, Row, Sql, bind};
use crate::error::StoreError;
use crate::journal::JournalEvent;
use crate::race::{NewRace, RaceEnd, RaceRecord, RaceStore, RaceVerdict};
use crate::records::now_ms;
use serde_json::Value;

const RACE_COLUMNS: &str =
    "slug, owner, spec, attempts, request, status, winner, decision, created_at, ended_at";

fn race(row: &dyn Row) -> Result<RaceRecord, StoreError> {
    Ok(RaceRecord {
        slug: row.get(0)?,
        owner: row.get(1)?,
        spec: row.get(2)?,
        attempts: row.get(3)?,
        request: row.json(4, "request")?,
        status: row.get(5)?,
        winner: row.get(6)?,
        decision: row.get::<Option<String>>(7)?.and_then(|text| {
            // A decision this build cannot read is kept as its text.
            serde_json::from_str(&text)
                .ok()
                .or(Some(Value::String(text)))
        }),
        created_at: row.get(8)?,
        ended_at: row.get(9)?,
    })
}

fn load_race(sql: &mut dyn Sql, slug: &str) -> Result<Option<RaceRecord>, StoreError> {
    sql.first(
        &format!("SELECT {RACE_COLUMNS} FROM races WHERE slug = ?1"),
        &bind![slug],
        race,
    )
}

fn verdict(row: &dyn Row) -> Result<RaceVerdict, StoreError> {
    Ok(RaceVerdict {
        a: row.get(0)?,
        b: row.get(1)?,
        winner: row.get(2)?,
        reasons: row.get(3)?,
    })
}

impl<D: Database> RaceStore for D {
    fn create_race(&mut self, new: &NewRace) -> Result<RaceRecord, StoreError> {
        self.write(|sql| {
            let tasks: i64 = sql.value(
                // (A slug has no `%` or `_`: the pattern is the slug and a dot, then anything.)
                "SELECT COUNT(*) FROM tasks WHERE slug = ?1 OR slug LIKE ?2",
                &bind![&new.slug, format!("{}.%", new.slug)],
            )?;
            if tasks > 0 || load_race(sql, &new.slug)?.is_some() {
                return Err(StoreError::SlugTaken(new.slug.clone()));
            }
            sql.execute(
                "INSERT INTO races (slug, owner, spec, attempts, request, status, created_at) \
                 VALUES (?1, ?2, ?3, ?4, ?5, 'running', ?6)",
                &[
                    Param::from(&new.slug),
                    Param::from(&new.owner),
                    Param::from(&new.spec),
                    Param::from(new.attempts),
                    Param::json(&new.request)?,
                    Param::from(now_ms()),
                ],
            )?;
            load_race(sql, &new.slug)?.ok_or_else(|| StoreError::Corrupt("race vanished".into()))
        })
    }

    fn race(&self, slug: &str) -> Result<Option<RaceRecord>, StoreError> {
        self.on_conn(|sql| load_race(sql, slug))
    }

    fn record_race_verdict(
        &mut self,
        slug: &str,
        given: &RaceVerdict,
    ) -> Result<RaceVerdict, StoreError> {
        self.write(|sql| {
            sql.execute(
                "INSERT INTO race_verdicts (race, a, b, winner, reasons, at) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (race, a, b) DO NOTHING",
                &bind![
                    slug,
                    given.a,
                    given.b,
                    &given.winner,
                    &given.reasons,
                    now_ms()
                ],
            )?;
            sql.one(
                "SELECT a, b, winner, reasons FROM race_verdicts \
                 WHERE race = ?1 AND a = ?2 AND b = ?3",
                &bind![slug, given.a, given.b],
                verdict,
            )
        })
    }

    fn race_verdicts(&self, slug: &str) -> Result<Vec<RaceVerdict>, StoreError> {
        self.on_conn(|sql| {
            sql.rows(
                "SELECT a, b, winner, reasons FROM race_verdicts WHERE race = ?1 ORDER BY a, b",
                &bind![slug],
                verdict,
            )
        })
    }

    fn end_race(&mut self, end: &RaceEnd<'_>) -> Result<RaceRecord, StoreError> {
        self.write(|sql| {
            let ended = sql.execute(
                "UPDATE races SET status = ?2, winner = ?3, decision = ?4, ended_at = ?5 \
                 WHERE slug = ?1 AND status = 'running'",
                &[
                    Param::from(end.slug),
                    Param::from(end.status),
                    Param::from(end.winner),
                    Param::json(end.decision)?,
                    Param::from(now_ms()),
                ],
            )?;
            let race = load_race(sql, end.slug)?
                .ok_or_else(|| StoreError::Corrupt(format!("no race {}", end.slug)))?;
            if ended == 1 {
                let event = JournalEvent::RaceEnded(end.decision.clone());
                super::journal::append(sql, end.journal_task, None, Some(&race.owner), &event)?;
            }
            Ok(race)
        })
    }
}

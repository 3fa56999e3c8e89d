//! Races in the store: a race is recorded once per slug (and never over a task of its name),
//! reads back with its request, keeps each pairwise verdict once (the first, whoever records
//! it again), and ends once: the second end, from a driver that resumed or raced, changes
//! nothing, so a winner is never picked twice.

use super::Site;
use super::fixtures::{end, new_round, new_task, summary};
use ganger_events::RoundStatus;
use ganger_store::{NewRace, RaceEnd, RaceVerdict, RoundKind, Spent, StoreError};
use serde_json::json;

fn new_race(slug: &str) -> NewRace {
    NewRace {
        slug: slug.into(),
        owner: "alice".into(),
        spec: "opencode:mock/a*2,claude".into(),
        attempts: 3,
        request: json!({ "brief": "Add a.txt", "first_green": false }),
    }
}

fn verdict(a: u32, b: u32, winner: &str, reasons: &str) -> RaceVerdict {
    RaceVerdict {
        a,
        b,
        winner: winner.into(),
        reasons: reasons.into(),
    }
}

pub fn a_race_is_recorded_once_and_never_over_a_task_of_its_name(site: &dyn Site) {
    let mut store = site.connect();
    let race = store.create_race(&new_race("r")).unwrap();
    assert_eq!(
        (
            race.status.as_str(),
            race.winner,
            race.attempts,
            &race.request
        ),
        ("running", None, 3, &new_race("r").request)
    );
    assert_eq!(site.connect().race("r").unwrap(), Some(race));
    assert!(matches!(
        site.connect().create_race(&new_race("r")),
        Err(StoreError::SlugTaken(_))
    ));
    // A task of the slug, or an attempt-like task under it, takes the slug too.
    store
        .create_task(
            &new_task("t", "alice"),
            &new_round(RoundKind::Start, "a", "alice"),
        )
        .unwrap();
    store.create_bare_task(&new_task("u.1", "alice")).unwrap();
    for taken in ["t", "u"] {
        assert!(
            matches!(
                store.create_race(&new_race(taken)),
                Err(StoreError::SlugTaken(_))
            ),
            "{taken}"
        );
        assert_eq!(store.race(taken).unwrap(), None);
    }
    // A longer slug that merely begins the same is free.
    store.create_race(&new_race("u1")).unwrap();
    assert_eq!(store.race("nothing").unwrap(), None);
}

pub fn a_races_verdicts_are_kept_once_and_its_end_is_written_once(site: &dyn Site) {
    let mut store = site.connect();
    store.create_race(&new_race("r")).unwrap();
    let first = verdict(2, 1, "A", "smaller");
    assert_eq!(store.record_race_verdict("r", &first).unwrap(), first);
    // A driver that resumed and judged again keeps the first verdict.
    let again = verdict(2, 1, "B", "changed its mind");
    assert_eq!(
        site.connect().record_race_verdict("r", &again).unwrap(),
        first
    );
    store
        .record_race_verdict("r", &verdict(1, 2, "B", "smaller"))
        .unwrap();
    assert_eq!(
        store.race_verdicts("r").unwrap(),
        vec![verdict(1, 2, "B", "smaller"), first.clone()]
    );

    let (task, _) = store
        .create_task(
            &new_task("r.2", "alice"),
            &new_round(RoundKind::Start, "a", "alice"),
        )
        .unwrap();
    let before = store.last_journal_id().unwrap();
    let decision = json!({ "rule": "tournament" });
    let end = |winner, decision| RaceEnd {
        slug: "r",
        status: "won",
        winner: Some(winner),
        decision,
        journal_task: task.id,
    };
    let won = store.end_race(&end(2, &decision)).unwrap();
    assert_eq!((won.status.as_str(), won.winner), ("won", Some(2)));
    assert!(won.ended_at.is_some());
    // The second end (a resumed driver) changes nothing: the winner stays.
    let second = site
        .connect()
        .end_race(&end(1, &json!({ "rule": "other" })))
        .unwrap();
    assert_eq!(second, won);
    assert_eq!(second.decision, Some(decision.clone()));
    // One journal line for the end, on the task named, by the race's owner.
    let entries = store.journal(before, 100).unwrap();
    let ended: Vec<_> = entries.iter().filter(|e| e.kind == "race-ended").collect();
    assert_eq!(ended.len(), 1, "{entries:?}");
    assert_eq!(ended[0].slug.as_deref(), Some("r.2"));
    assert_eq!(ended[0].commander.as_deref(), Some("alice"));
    assert_eq!(ended[0].detail, decision);
}

/// What a race spent is what its tasks `SLUG.*` spent (attempts and judges, whatever fleet
/// each belongs to), a round left out when asked; a task `SLUG`, or of a slug that only
/// begins alike (`SLUG-2.1`, `SLUGx.1`), is not the race's.
pub fn a_races_spending_is_its_attempts_and_judges_and_no_other_tasks(site: &dyn Site) {
    let mut store = site.connect();
    let mut spend = |slug: &str, input: u64, usd: f64| {
        let (_, round) = store
            .create_task(
                &new_task(slug, "alice"),
                &new_round(RoundKind::Start, slug, "alice"),
            )
            .unwrap();
        store
            .finish_round(
                round.id,
                &end(RoundStatus::Done, "ses", summary(input, Some(usd), None)),
            )
            .unwrap();
        round.id
    };
    spend("r.1", 100, 0.5);
    let judge = spend("r.j1v2", 200, 0.25);
    spend("r", 1000, 1.0);
    spend("r-2.1", 1000, 1.0);
    spend("rx.1", 1000, 1.0);
    // Tokens are input + output (15 each here).
    assert_eq!(
        store.race_spent("r", None).unwrap(),
        Spent {
            usd: 0.75,
            tokens: 115 + 215
        }
    );
    assert_eq!(
        store.race_spent("r", Some(judge)).unwrap(),
        Spent {
            usd: 0.5,
            tokens: 115
        }
    );
    assert_eq!(store.race_spent("none", None).unwrap(), Spent::default());
}

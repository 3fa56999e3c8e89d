//! The rounds tallied for an operator's metrics: by their task's agent and their status, the
//! ended ones' durations summed and counted within each bound; a running round is counted
//! and not timed.

use super::Site;
use super::fixtures::{done, end, new_round, new_task, summary};
use ganger_events::RoundStatus;
use ganger_store::{RoundKind, TaskUpdate};

pub fn rounds_are_tallied_by_agent_and_status_with_their_durations(site: &dyn Site) {
    let mut store = site.connect();
    assert!(store.round_tallies(&[100]).unwrap().is_empty());
    // opencode: a slow round done, a quick one done, a third running.
    let (task, slow) = store
        .create_task(
            &new_task("a", "alice"),
            &new_round(RoundKind::Start, "a1", "alice"),
        )
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    store.finish_round(slow.id, &done()).unwrap();
    for token in ["a2", "a3"] {
        let round = store
            .begin_round(
                task.id,
                &new_round(RoundKind::Fix, token, "alice"),
                &TaskUpdate::default(),
            )
            .unwrap();
        if token == "a2" {
            store.finish_round(round.id, &done()).unwrap();
        }
    }
    // claude: one round failed.
    let claude = ganger_store::NewTask {
        agent: "claude".into(),
        ..new_task("b", "alice")
    };
    let (_, failed) = store
        .create_task(&claude, &new_round(RoundKind::Start, "b1", "alice"))
        .unwrap();
    let failure = end(RoundStatus::Failed, "ses_b", summary(1, None, None));
    store.finish_round(failed.id, &failure).unwrap();

    let tallies = site.connect().round_tallies(&[100, 3_600_000]).unwrap();
    let seen: Vec<(&str, RoundStatus, u64, u64)> = tallies
        .iter()
        .map(|t| (t.agent.as_str(), t.status, t.rounds, t.ended))
        .collect();
    assert_eq!(
        seen,
        [
            ("claude", RoundStatus::Failed, 1, 1),
            ("opencode", RoundStatus::Done, 2, 2),
            ("opencode", RoundStatus::Running, 1, 0),
        ]
    );
    let done_ones = &tallies[1];
    assert!(done_ones.duration_ms >= 300, "{done_ones:?}");
    // Cumulative: the slow one is past 100 ms, both are within an hour.
    assert!(done_ones.within[0] <= 1, "{done_ones:?}");
    assert_eq!(done_ones.within[1], 2, "{done_ones:?}");
    let running = &tallies[2];
    assert_eq!((running.duration_ms, &running.within[..]), (0, &[0, 0][..]));
}

//! Evidence the store keeps for fleets: budgets and what was spent (a task's, a fleet's, with
//! a running round's stored figures and one round left out), labels and `DONE:` lines.

use super::Site;
use super::fixtures::{end, new_round, new_task, summary};
use ganger_events::RoundStatus;
use ganger_store::{Budget, RoundKind, Spent};
use std::collections::BTreeMap;

pub fn spending_is_summed_per_task_and_per_fleet(site: &dyn Site) {
    let mut store = site.connect();
    let (a, a1) = store
        .create_task(
            &new_task("a", "boss"),
            &new_round(RoundKind::Start, "a1", "boss"),
        )
        .unwrap();
    store
        .finish_round(
            a1.id,
            &end(RoundStatus::Done, "ses", summary(100, Some(0.25), None)),
        )
        .unwrap();
    let a2 = store
        .begin_round(
            a.id,
            &new_round(RoundKind::Fix, "a2", "boss"),
            &Default::default(),
        )
        .unwrap();
    // A running round counts as far as its stored summary goes.
    store
        .record_progress(a2.id, &summary(50, None, None), 0)
        .unwrap();
    let (b, b1) = store
        .create_task(
            &new_task("b", "boss"),
            &new_round(RoundKind::Start, "b1", "boss"),
        )
        .unwrap();
    store
        .finish_round(
            b1.id,
            &end(RoundStatus::Done, "ses", summary(1000, Some(1.0), None)),
        )
        .unwrap();
    let (c, _) = store
        .create_task(
            &new_task("c", "boss"),
            &new_round(RoundKind::Start, "c1", "boss"),
        )
        .unwrap();

    // Tokens are input + output + reasoning; cached reads are not counted.
    assert_eq!(
        store.task_spent(a.id, None).unwrap(),
        Spent {
            usd: 0.25,
            tokens: 115 + 65
        }
    );
    assert_eq!(
        store.task_spent(a.id, Some(a2.id)).unwrap(),
        Spent {
            usd: 0.25,
            tokens: 115
        }
    );

    assert_eq!(store.task_budget(a.id).unwrap(), Budget::default());
    let budget = Budget {
        usd: Some(2.0),
        tokens: None,
    };
    store.set_task_budget(a.id, &budget).unwrap();
    assert_eq!(store.task_budget(a.id).unwrap(), budget);

    store.set_fleet_budget("nightly", None, Some(5000)).unwrap();
    store
        .set_fleet_budget("nightly", Some(1.5), Some(4000))
        .unwrap();
    assert_eq!(
        store.fleet_budget("nightly").unwrap(),
        Budget {
            usd: Some(1.5),
            tokens: Some(4000)
        }
    );
    assert_eq!(store.fleet_budget("other").unwrap(), Budget::default());
    store.set_task_fleet(a.id, Some("nightly")).unwrap();
    store.set_task_fleet(b.id, Some("nightly")).unwrap();
    store.set_task_fleet(c.id, Some("nightly")).unwrap();
    store.set_task_fleet(c.id, None).unwrap();
    assert_eq!(store.task_fleet(a.id).unwrap().as_deref(), Some("nightly"));
    assert_eq!(store.task_fleet(c.id).unwrap(), None);
    assert_eq!(
        store.fleet_spent("nightly", None).unwrap(),
        Spent {
            usd: 1.25,
            tokens: 115 + 65 + 1015
        }
    );
    assert_eq!(
        store.fleet_spent("nightly", Some(a2.id)).unwrap(),
        Spent {
            usd: 1.25,
            tokens: 115 + 1015
        }
    );
    assert_eq!(store.fleet_spent("empty", None).unwrap(), Spent::default());
}

pub fn labels_done_lines_and_groups_read_back(site: &dyn Site) {
    let mut store = site.connect();
    let (a, a1) = store
        .create_task(
            &new_task("a", "boss"),
            &new_round(RoundKind::Start, "a1", "boss"),
        )
        .unwrap();
    let (b, _) = store
        .create_task(
            &new_task("b", "boss"),
            &new_round(RoundKind::Start, "b1", "boss"),
        )
        .unwrap();
    store
        .set_labels(
            a.id,
            &[("team".into(), "red".into()), ("size".into(), "s".into())],
        )
        .unwrap();
    store
        .set_labels(a.id, &[("team".into(), "blue".into())])
        .unwrap();
    assert_eq!(
        store.labels(a.id).unwrap(),
        BTreeMap::from([("size".into(), "s".into()), ("team".into(), "blue".into())])
    );
    store
        .finish_round(
            a1.id,
            &end(RoundStatus::Done, "ses", summary(1, None, Some("DONE: a"))),
        )
        .unwrap();
    store.record_done(a.id, 1, "DONE: a").unwrap();
    assert_eq!(
        store.done_lines().unwrap(),
        BTreeMap::from([("a".into(), "DONE: a".into())])
    );
    let grouped = store.labelled_tasks("team").unwrap();
    assert_eq!(grouped.len(), 2);
    assert_eq!(
        (
            grouped[0].slug.as_str(),
            grouped[0].value.as_deref(),
            grouped[0].done.as_deref()
        ),
        ("a", Some("blue"), Some("DONE: a"))
    );
    assert_eq!(grouped[0].last_status.as_deref(), Some("done"));
    assert_eq!(
        (
            grouped[1].slug.as_str(),
            grouped[1].value.as_deref(),
            grouped[1].last_status.as_deref()
        ),
        ("b", None, Some("running"))
    );
    let _ = b;
}

pub fn a_new_tasks_labels_budget_and_fleet_are_recorded_with_it(site: &dyn Site) {
    let mut store = site.connect();
    let mut task = new_task("dressed", "boss");
    task.labels = vec![("team".into(), "red".into())];
    task.budget = Budget {
        usd: Some(2.5),
        tokens: Some(1000),
    };
    task.fleet = Some("nightly".into());
    task.network = ganger_events::Network::Gateway;
    task.allow = vec!["packages.example.org:443".into(), "*.example.net:80".into()];
    let (made, _) = store
        .create_task(&task, &new_round(RoundKind::Start, "d1", "boss"))
        .unwrap();
    // Its network and the hosts its gateway rounds may reach read back.
    let read = store.task("dressed").unwrap().unwrap();
    assert_eq!(read.network, ganger_events::Network::Gateway);
    assert_eq!(read.allow, task.allow);
    assert_eq!(
        store.labels(made.id).unwrap(),
        BTreeMap::from([("team".into(), "red".into())])
    );
    assert_eq!(store.task_budget(made.id).unwrap(), task.budget);
    assert_eq!(
        store.task_fleet(made.id).unwrap().as_deref(),
        Some("nightly")
    );
    // A start refused for its slug records none of it.
    let mut again = new_task("dressed", "boss");
    again.labels = vec![("team".into(), "blue".into())];
    assert!(
        store
            .create_task(&again, &new_round(RoundKind::Start, "d2", "boss"))
            .is_err()
    );
    assert_eq!(
        store.labels(made.id).unwrap(),
        BTreeMap::from([("team".into(), "red".into())])
    );
    // A task made without them has none.
    let (bare, _) = store
        .create_task(
            &new_task("bare", "boss"),
            &new_round(RoundKind::Start, "b1", "boss"),
        )
        .unwrap();
    assert!(store.labels(bare.id).unwrap().is_empty());
    assert!(!store.task_budget(bare.id).unwrap().is_set());
    assert_eq!(store.task_fleet(bare.id).unwrap(), None);
}

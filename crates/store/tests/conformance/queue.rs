//! The queue as the store holds it: an item moves only from the state it is in (so two
//! schedulers cannot both claim it), a move and the item it queues next are one change, and
//! under races: one open start per slug, one open fleet item per slug, and a fleet refused a
//! slug that another fleet's task (or a task of no fleet) has, with nothing of it written.

use super::Site;
use super::fixtures::{new_round, new_task};
use ganger_store::{
    Budget, FleetItem, FleetRecord, FleetSubmission, NewQueued, QueueKind, QueueState, RoundKind,
    SlugHolder, StoreError,
};
use std::path::PathBuf;

fn queued(slug: &str, kind: QueueKind, fleet: Option<&str>) -> NewQueued {
    NewQueued {
        slug: slug.into(),
        kind,
        options: serde_json::json!({}),
        prompt_file: PathBuf::new(),
        prompt: Some(format!("the brief of {slug}\nin two lines")),
        commander: "alice".into(),
        generation: None,
        fleet: fleet.map(Into::into),
        after: Vec::new(),
        not_before: 0,
    }
}

/// A submission of fleet `name` that starts each of `slugs` (none of which has a task).
fn starting(name: &str, slugs: &[&str]) -> FleetSubmission {
    FleetSubmission {
        fleet: FleetRecord {
            name: name.into(),
            file: Some(format!("{name}.toml")),
            limits: serde_json::json!({}),
            remote: Some(format!("git://127.0.0.1/{name}.git")),
            created_at: 1,
        },
        budget: Some(Budget {
            usd: Some(1.0),
            tokens: None,
        }),
        slugs: slugs.iter().map(|s| (*s).to_owned()).collect(),
        items: slugs
            .iter()
            .map(|slug| FleetItem {
                item: queued(slug, QueueKind::Start, Some(name)),
                rounds: None,
            })
            .collect(),
    }
}

pub fn items_move_only_from_the_state_they_are_in(site: &dyn Site) {
    let mut store = site.connect();
    let mut other = site.connect();
    let a = store.enqueue(&queued("a", QueueKind::Start, None)).unwrap();
    let b = store.enqueue(&queued("b", QueueKind::Fix, None)).unwrap();
    assert_eq!(
        (a.state, a.claimed_at, a.round),
        (QueueState::Queued, None, None)
    );
    let open: Vec<i64> = other.open_items().unwrap().iter().map(|i| i.id).collect();
    assert_eq!(open, [a.id, b.id]);
    // The prompt is the store's, for a worker on any host to read.
    assert_eq!(
        other.open_items().unwrap()[1].prompt.as_deref(),
        Some("the brief of b\nin two lines")
    );
    assert_eq!(other.waiting_starts().unwrap(), 1);
    // Two schedulers claim the same item: one wins.
    assert!(
        store
            .move_item(a.id, QueueState::Queued, QueueState::Delivering, None, None)
            .unwrap()
    );
    assert!(
        !other
            .move_item(a.id, QueueState::Queued, QueueState::Delivering, None, None)
            .unwrap()
    );
    let claimed = other.queue_items(None).unwrap()[0].clone();
    assert_eq!(claimed.state, QueueState::Delivering);
    assert!(claimed.claimed_at.is_some());
    // Put back (a paused model), then claimed and delivered as round 1.
    store.requeue(a.id, 12_345, Some("model paused")).unwrap();
    let back = other.queue_items(None).unwrap()[0].clone();
    assert_eq!(
        (
            back.state,
            back.not_before,
            back.reason.as_deref(),
            back.claimed_at
        ),
        (QueueState::Queued, 12_345, Some("model paused"), None)
    );
    assert!(
        store
            .move_item(a.id, QueueState::Queued, QueueState::Delivering, None, None)
            .unwrap()
    );
    assert!(
        store
            .move_item(
                a.id,
                QueueState::Delivering,
                QueueState::Delivered,
                None,
                Some(1)
            )
            .unwrap()
    );
    // Its round ended badly: it ends, and its retry is queued in the same change; a second
    // scheduler doing the same finds it moved and queues nothing.
    let retry = queued("a", QueueKind::Fix, None);
    assert!(
        store
            .move_and_enqueue(
                a.id,
                QueueState::Delivered,
                QueueState::Ended,
                Some("retry"),
                &retry
            )
            .unwrap()
    );
    assert!(
        !other
            .move_and_enqueue(
                a.id,
                QueueState::Delivered,
                QueueState::Ended,
                Some("retry"),
                &retry
            )
            .unwrap()
    );
    let items = other.queue_items(None).unwrap();
    let states: Vec<(String, QueueKind, QueueState, Option<u32>)> = items
        .iter()
        .map(|i| (i.slug.clone(), i.kind, i.state, i.round))
        .collect();
    assert_eq!(
        states,
        [
            ("a".to_owned(), QueueKind::Start, QueueState::Ended, Some(1)),
            ("b".to_owned(), QueueKind::Fix, QueueState::Queued, None),
            ("a".to_owned(), QueueKind::Fix, QueueState::Queued, None),
        ]
    );
    assert!(
        items
            .iter()
            .all(|i| i.state.is_open() == (i.state != QueueState::Ended))
    );
    assert_eq!(other.open_items().unwrap().len(), 2);
    assert_eq!(other.waiting_starts().unwrap(), 0);
    let mut counts = other.queue_counts(None).unwrap();
    counts.sort_by_key(|(state, _)| state.as_str());
    assert_eq!(counts, [(QueueState::Ended, 1), (QueueState::Queued, 2)]);
}

pub fn a_scheduler_reads_the_queue_a_page_at_a_time_by_state(site: &dyn Site) {
    let mut store = site.connect();
    let other = site.connect();
    let ids: Vec<i64> = ["a", "b", "c", "d", "e"]
        .iter()
        .map(|slug| {
            store
                .enqueue(&queued(slug, QueueKind::Start, None))
                .unwrap()
                .id
        })
        .collect();
    // b is being delivered, d ended.
    assert!(
        store
            .move_item(
                ids[1],
                QueueState::Queued,
                QueueState::Delivering,
                None,
                None
            )
            .unwrap()
    );
    assert!(
        store
            .move_item(ids[3], QueueState::Queued, QueueState::Ended, None, None)
            .unwrap()
    );
    let page = |after: i64, limit: u32| -> Vec<String> {
        other
            .items_in(&[QueueState::Queued], after, limit)
            .unwrap()
            .into_iter()
            .map(|i| i.slug)
            .collect()
    };
    assert_eq!(page(0, 2), ["a", "c"]);
    assert_eq!(page(ids[2], 2), ["e"]);
    assert!(page(ids[4], 2).is_empty());
    let in_flight = other
        .items_in(&[QueueState::Delivering, QueueState::Delivered], 0, 100)
        .unwrap();
    assert_eq!(in_flight.len(), 1);
    assert_eq!(
        (in_flight[0].slug.as_str(), in_flight[0].prompt.as_deref()),
        ("b", Some("the brief of b\nin two lines"))
    );
    assert!(other.items_in(&[], 0, 100).unwrap().is_empty());
    assert!(other.slug_is_open("b").unwrap());
    assert!(other.slug_is_open("e").unwrap());
    assert!(!other.slug_is_open("d").unwrap());
    assert!(!other.slug_is_open("nobody").unwrap());
}

pub fn of_racing_queued_starts_of_one_slug_exactly_one_is_accepted(site: &dyn Site) {
    let barrier = std::sync::Barrier::new(10);
    let results: Vec<Result<_, StoreError>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..10)
            .map(|_| {
                scope.spawn(|| {
                    let mut store = site.connect();
                    barrier.wait();
                    store.enqueue(&queued("q1", QueueKind::Start, None))
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let accepted = results.iter().filter(|r| r.is_ok()).count();
    let refused: Vec<String> = results
        .iter()
        .filter_map(|r| r.as_ref().err().map(ToString::to_string))
        .collect();
    assert_eq!(accepted, 1, "{refused:?}");
    assert_eq!(refused, vec!["task q1 is queued already"; 9]);
    // Fixes of one task may queue up; a start may again once the first one is closed.
    let mut store = site.connect();
    store.enqueue(&queued("q1", QueueKind::Fix, None)).unwrap();
    store.enqueue(&queued("q1", QueueKind::Fix, None)).unwrap();
    let first = store.open_items().unwrap()[0].clone();
    assert_eq!(first.kind, QueueKind::Start);
    store
        .move_item(
            first.id,
            QueueState::Queued,
            QueueState::Refused,
            Some("no"),
            None,
        )
        .unwrap();
    store
        .enqueue(&queued("q1", QueueKind::Start, None))
        .unwrap();
}

pub fn concurrent_submissions_of_one_fleet_queue_each_task_once(site: &dyn Site) {
    let slugs = ["a", "b", "c", "d"];
    let barrier = std::sync::Barrier::new(3);
    let results: Vec<Vec<Option<_>>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..3)
            .map(|_| {
                scope.spawn(|| {
                    let mut store = site.connect();
                    barrier.wait();
                    store.submit_fleet(&starting("f", &slugs)).unwrap()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let queued_per_run: Vec<usize> = results
        .iter()
        .map(|r| r.iter().filter(|i| i.is_some()).count())
        .collect();
    assert_eq!(
        queued_per_run.iter().sum::<usize>(),
        4,
        "{queued_per_run:?}"
    );
    let mut store = site.connect();
    let items = store.queue_items(Some("f")).unwrap();
    let mut per_slug: Vec<&str> = items.iter().map(|i| i.slug.as_str()).collect();
    per_slug.sort_unstable();
    assert_eq!(per_slug, slugs);
    let fleets = store.fleets().unwrap();
    assert_eq!(
        (fleets.len(), fleets[0].remote.as_deref()),
        (1, Some("git://127.0.0.1/f.git"))
    );
    assert_eq!(
        store.queue_counts(Some("f")).unwrap(),
        [(QueueState::Queued, 4)]
    );
    store.enqueue(&queued("z", QueueKind::Start, None)).unwrap();
    assert!(store.queue_counts(Some("nope")).unwrap().is_empty());
    assert_eq!(store.queue_counts(None).unwrap(), [(QueueState::Queued, 5)]);
    // A task that was started or continued since the submitter looked is left alone.
    let (task, _) = store
        .create_task(
            &new_task("e", "alice"),
            &new_round(RoundKind::Start, "e1", "alice"),
        )
        .unwrap();
    store.set_task_fleet(task.id, Some("f")).unwrap();
    let mut stale = starting("f", &["e"]);
    stale.items[0].item.kind = QueueKind::Fix;
    stale.items[0].rounds = Some(0);
    assert_eq!(store.submit_fleet(&stale).unwrap(), vec![None]);
    stale.items[0].rounds = Some(1);
    assert!(store.submit_fleet(&stale).unwrap()[0].is_some());
    // The fleet's one open item per slug holds even against a direct insert.
    let again = store.enqueue(&queued("e", QueueKind::Fix, Some("f")));
    assert!(
        matches!(&again, Err(StoreError::AlreadyQueued(slug)) if slug == "e"),
        "{again:?}"
    );
}

pub fn a_fleet_is_refused_a_slug_another_fleet_or_no_fleet_holds_and_writes_nothing(
    site: &dyn Site,
) {
    let mut store = site.connect();
    store.submit_fleet(&starting("alpha", &["x"])).unwrap();
    // Alpha's x runs and ends: its task is alpha's.
    let (task, _) = store
        .create_task(
            &new_task("x", "alice"),
            &new_round(RoundKind::Start, "x1", "alice"),
        )
        .unwrap();
    store.set_task_fleet(task.id, Some("alpha")).unwrap();
    let item = store.open_items().unwrap()[0].id;
    store
        .move_item(item, QueueState::Queued, QueueState::Ended, None, Some(1))
        .unwrap();
    let refused = store.submit_fleet(&starting("beta", &["y", "x"]));
    assert_eq!(
        refused.unwrap_err().to_string(),
        "task x belongs to fleet alpha; fleet beta cannot run a task of that slug"
    );
    assert_eq!(
        store
            .fleet_conflict("beta", &["y".into(), "x".into()])
            .unwrap(),
        Some(("x".into(), SlugHolder::Fleet("alpha".into())))
    );
    assert!(store.queue_items(Some("beta")).unwrap().is_empty());
    assert!(store.fleets().unwrap().iter().all(|f| f.name != "beta"));
    assert_eq!(store.fleet_budget("beta").unwrap(), Budget::default());
    // Alpha itself may come back to its own task.
    assert_eq!(store.fleet_conflict("alpha", &["x".into()]).unwrap(), None);
    // A task started by hand, and a start queued by hand, belong to no fleet.
    store
        .create_task(
            &new_task("hand", "alice"),
            &new_round(RoundKind::Start, "h1", "alice"),
        )
        .unwrap();
    store
        .enqueue(&queued("later", QueueKind::Start, None))
        .unwrap();
    for slug in ["hand", "later"] {
        let refused = store.submit_fleet(&starting("beta", &[slug])).unwrap_err();
        assert!(
            matches!(&refused, StoreError::FleetConflict { holder: None, .. }),
            "{refused:?}"
        );
        assert_eq!(
            refused.to_string(),
            format!("task {slug} belongs to no fleet; fleet beta cannot run a task of that slug")
        );
    }
    // A start refused at delivery made no task: its slug is free again.
    let later = store.open_items().unwrap().last().unwrap().id;
    store
        .move_item(later, QueueState::Queued, QueueState::Refused, None, None)
        .unwrap();
    assert!(store.submit_fleet(&starting("beta", &["later"])).is_ok());
}

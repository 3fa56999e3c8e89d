//! The merge queue: a task is queued once while open; a batch takes a base's queued items by
//! priority then age, each in one batch only however many landers race for them; a landed
//! batch lands its items once, an abandoned one queues them again, a returned item leaves;
//! the lander's claim on a base excludes a second lander, on any connection.

use super::Site;
use super::fixtures::new_task;
use ganger_store::{ClaimKey, NewLandItem, StoreError};

fn queue(site: &dyn Site, slugs: &[(&str, &str, i64)]) -> Vec<i64> {
    let mut store = site.connect();
    slugs
        .iter()
        .map(|(slug, base, priority)| {
            let task = store.create_bare_task(&new_task(slug, "alice")).unwrap();
            let item = store
                .land_enqueue(&NewLandItem {
                    task_id: task.id,
                    base: (*base).into(),
                    task_commit: "c".repeat(40),
                    commander: "alice".into(),
                    priority: *priority,
                    fix: *priority > 0,
                })
                .unwrap()
                .unwrap();
            assert_eq!(item.state, "queued");
            assert_eq!(item.slug, *slug);
            task.id
        })
        .collect()
}

pub fn a_batch_takes_a_bases_items_by_priority_then_age_and_a_task_is_queued_once(site: &dyn Site) {
    let tasks = queue(
        site,
        &[
            ("a", "main", 0),
            ("b", "main", 5),
            ("c", "dev", 0),
            ("d", "main", 0),
        ],
    );
    let mut store = site.connect();
    let again = NewLandItem {
        task_id: tasks[0],
        base: "main".into(),
        task_commit: "d".repeat(40),
        commander: "alice".into(),
        priority: 0,
        fix: false,
    };
    assert_eq!(store.land_enqueue(&again).unwrap(), None);
    assert_eq!(store.land_bases().unwrap(), ["dev", "main"]);
    let lander = ClaimKey::new("lander-1");
    let (batch, items) = store
        .land_take_batch("main", &"0".repeat(40), &lander, 2)
        .unwrap()
        .unwrap();
    let slugs: Vec<&str> = items.iter().map(|i| i.slug.as_str()).collect();
    assert_eq!(slugs, ["b", "a"]);
    assert_eq!((items[0].fix, items[1].fix), (true, false));
    assert!(
        items
            .iter()
            .all(|i| i.state == "testing" && i.batch == Some(batch.id))
    );
    assert_eq!(batch.state, "testing");
    assert_eq!(batch.lander, lander);
    // Under test is still open: not queued twice.
    assert_eq!(store.land_enqueue(&again).unwrap(), None);
    let (_, rest) = store
        .land_take_batch("main", &"0".repeat(40), &lander, 10)
        .unwrap()
        .unwrap();
    assert_eq!(rest.len(), 1);
    assert_eq!(rest[0].slug, "d");
    assert_eq!(
        store.land_take_batch("main", "0", &lander, 10).unwrap(),
        None
    );
}

pub fn a_landed_batch_lands_once_an_abandoned_one_is_queued_again_and_a_returned_item_leaves(
    site: &dyn Site,
) {
    queue(
        site,
        &[("a", "main", 0), ("b", "main", 0), ("c", "main", 0)],
    );
    let mut store = site.connect();
    let lander = ClaimKey::new("lander-1");
    let (batch, items) = store
        .land_take_batch("main", &"0".repeat(40), &lander, 3)
        .unwrap()
        .unwrap();
    store
        .land_return(
            items[2].id,
            "culprit",
            serde_json::json!({"check": "tests"}),
        )
        .unwrap();
    store
        .land_progress(batch.id, &serde_json::json!({"runs": 3}))
        .unwrap();
    // A dead lander's batch: abandoned, its open items queued again, the returned one not.
    assert_eq!(store.land_open_batches("main").unwrap().len(), 1);
    assert!(store.land_finish(batch.id, false).unwrap());
    assert!(!store.land_finish(batch.id, true).unwrap(), "ended once");
    let open = store.land_items(true).unwrap();
    let states: Vec<(&str, &str)> = open
        .iter()
        .map(|i| (i.slug.as_str(), i.state.as_str()))
        .collect();
    assert_eq!(states, [("a", "queued"), ("b", "queued")]);
    // The next batch lands them; its tip was recorded before.
    let (next, _) = store
        .land_take_batch("main", &"0".repeat(40), &lander, 3)
        .unwrap()
        .unwrap();
    store.land_landing(next.id, &"1".repeat(40)).unwrap();
    let open = store.land_open_batches("main").unwrap();
    assert_eq!(open[0].state, "landing");
    assert_eq!(open[0].tip.as_deref(), Some("1".repeat(40).as_str()));
    // a conflicts with b and with its base; once a lands, neither pair is left.
    let pair = |other: &str, with_base: bool| ganger_store::PredictedConflict {
        task: "a".into(),
        other: other.into(),
        with_base,
        files: Vec::new(),
    };
    let a_id = store.land_items(true).unwrap()[0].task_id;
    store
        .record_conflicts(
            a_id,
            "a",
            None,
            None,
            &[pair("b", false), pair("main", true)],
        )
        .unwrap();
    assert_eq!(store.conflicts().unwrap().len(), 2);
    // One of them the base has already: landed without the batch.
    let b = store.land_items(true).unwrap()[1].id;
    store.land_already(b).unwrap();
    assert!(store.land_finish(next.id, true).unwrap());
    assert!(!store.land_finish(next.id, false).unwrap());
    assert_eq!(store.conflicts().unwrap(), []);
    assert!(store.land_items(true).unwrap().is_empty());
    let all = store.land_items(false).unwrap();
    let states: Vec<(&str, &str)> = all
        .iter()
        .map(|i| (i.slug.as_str(), i.state.as_str()))
        .collect();
    assert_eq!(
        states,
        [("a", "landed"), ("b", "landed"), ("c", "returned")]
    );
    assert_eq!(all[2].reason.as_deref(), Some("culprit"));
    let batches = store.land_batches(10).unwrap();
    assert_eq!(batches[0].state, "landed");
    assert_eq!(batches[1].state, "abandoned");
    assert_eq!(batches[1].progress["runs"], 3);
    let kinds: Vec<String> = store
        .journal(0, 100)
        .unwrap()
        .into_iter()
        .map(|e| e.kind)
        .filter(|k| k.starts_with("land"))
        .collect();
    assert_eq!(
        kinds,
        [
            "land-queued",
            "land-queued",
            "land-queued",
            "land-returned",
            "landed",
            "landed"
        ]
    );
}

pub fn a_batch_takes_only_the_tasks_of_its_first_items_sandbox_and_network(site: &dyn Site) {
    use ganger_events::{Network, SandboxKind};
    let mut store = site.connect();
    let kinds = [
        ("l1", SandboxKind::Local, Network::Shared),
        ("b1", SandboxKind::Bwrap, Network::Shared),
        ("l2", SandboxKind::Local, Network::Shared),
        ("n1", SandboxKind::Bwrap, Network::None),
        ("b2", SandboxKind::Bwrap, Network::Shared),
    ];
    for (slug, sandbox, network) in kinds {
        let mut new = new_task(slug, "alice");
        new.sandbox = sandbox;
        new.network = network;
        let task = store.create_bare_task(&new).unwrap();
        store
            .land_enqueue(&NewLandItem {
                task_id: task.id,
                base: "main".into(),
                task_commit: "c".repeat(40),
                commander: "alice".into(),
                priority: 0,
                fix: false,
            })
            .unwrap()
            .unwrap();
    }
    let lander = ClaimKey::new("lander-1");
    let mut batches = Vec::new();
    while let Some((_, items)) = store
        .land_take_batch("main", &"0".repeat(40), &lander, 10)
        .unwrap()
    {
        batches.push(items.iter().map(|i| i.slug.clone()).collect::<Vec<_>>());
    }
    assert_eq!(batches, [vec!["l1", "l2"], vec!["b1", "b2"], vec!["n1"]]);
}

pub fn of_racing_landers_each_item_is_in_one_batch_and_one_holds_a_bases_claim(site: &dyn Site) {
    let slugs: Vec<String> = (0..12).map(|n| format!("t{n}")).collect();
    let wanted: Vec<(&str, &str, i64)> = slugs.iter().map(|s| (s.as_str(), "main", 0)).collect();
    queue(site, &wanted);
    let taken: Vec<i64> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..4)
            .map(|n| {
                scope.spawn(move || {
                    let mut mine = site.connect();
                    let me = ClaimKey::new(format!("lander-{n}"));
                    let mut ids = Vec::new();
                    while let Some((_, items)) = mine
                        .land_take_batch("main", &"0".repeat(40), &me, 2)
                        .unwrap()
                    {
                        ids.extend(items.iter().map(|i| i.id));
                    }
                    ids
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    let mut sorted = taken.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(sorted.len(), 12, "every item taken exactly once: {taken:?}");
    assert_eq!(taken.len(), 12);
    // One lander per base: its claim is held by one connection at a time.
    let first = site.connect();
    let held = first.claim("land-6d61696e").unwrap();
    let second = site.connect();
    assert!(matches!(
        second.claim("land-6d61696e"),
        Err(StoreError::ClaimHeld { .. })
    ));
    held.release();
    let again = second.claim("land-6d61696e").unwrap();
    again.release();
}

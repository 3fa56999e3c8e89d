//! Schedulers sharing one store: of racing claims of a queued item exactly one wins and is
//! recorded as its claimant; an item whose claimant died is taken over by one scheduler only;
//! a put-back item has no claimant. And the workers' records: registered, seen, listed,
//! replaced under their name, removed.

use super::Site;
use ganger_events::SandboxKind;
use ganger_store::{ClaimKey, NewQueued, QueueKind, QueueState, WorkerAgent, WorkerRecord};
use std::path::PathBuf;

fn start(slug: &str) -> NewQueued {
    NewQueued {
        slug: slug.into(),
        kind: QueueKind::Start,
        options: serde_json::json!({}),
        prompt_file: PathBuf::from(format!("/tmp/{slug}.md")),
        prompt: None,
        commander: "alice".into(),
        generation: None,
        fleet: None,
        after: Vec::new(),
        not_before: 0,
    }
}

pub fn of_racing_claims_of_an_item_exactly_one_wins_and_is_recorded(site: &dyn Site) {
    let mut store = site.connect();
    let item = store.enqueue(&start("raced")).unwrap();
    assert_eq!(item.claimed_by, None);
    let winners: Vec<String> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..6)
            .map(|n| {
                scope.spawn(move || {
                    let mut mine = site.connect();
                    let me = ClaimKey::new(format!("scheduler-{n}"));
                    mine.claim_item(item.id, &me)
                        .unwrap()
                        .then(|| me.as_str().to_owned())
                })
            })
            .collect();
        handles
            .into_iter()
            .filter_map(|h| h.join().unwrap())
            .collect()
    });
    assert_eq!(winners.len(), 1, "{winners:?}");
    let claimed = store.open_items().unwrap().pop().unwrap();
    assert_eq!(claimed.state, QueueState::Delivering);
    assert_eq!(claimed.claimed_by.as_deref(), Some(winners[0].as_str()));
    assert!(claimed.claimed_at.is_some());
    // Claimed once: a later claim is refused.
    assert!(!store.claim_item(item.id, &ClaimKey::new("late")).unwrap());
    // Put back, it has no claimant and can be claimed again.
    store.requeue(item.id, 0, Some("later")).unwrap();
    let back = store.open_items().unwrap().pop().unwrap();
    assert_eq!((back.state, back.claimed_by), (QueueState::Queued, None));
    assert!(store.claim_item(item.id, &ClaimKey::new("again")).unwrap());
}

pub fn an_item_of_a_dead_claimant_is_taken_over_once(site: &dyn Site) {
    let mut store = site.connect();
    let item = store.enqueue(&start("orphan")).unwrap();
    assert!(store.claim_item(item.id, &ClaimKey::new("dead")).unwrap());
    // Two schedulers find the claimant dead: one takes the item over.
    let mut first = site.connect();
    let mut second = site.connect();
    assert!(
        first
            .take_over_item(item.id, Some("dead"), &ClaimKey::new("first"))
            .unwrap()
    );
    assert!(
        !second
            .take_over_item(item.id, Some("dead"), &ClaimKey::new("second"))
            .unwrap()
    );
    let now = store.open_items().unwrap().pop().unwrap();
    assert_eq!(now.claimed_by.as_deref(), Some("first"));
    // Delivered, it can still change hands; ended, it belongs to nobody to take.
    assert!(
        store
            .move_item(
                item.id,
                QueueState::Delivering,
                QueueState::Delivered,
                None,
                Some(1)
            )
            .unwrap()
    );
    assert!(
        second
            .take_over_item(item.id, Some("first"), &ClaimKey::new("second"))
            .unwrap()
    );
    assert!(
        store
            .move_item(
                item.id,
                QueueState::Delivered,
                QueueState::Ended,
                None,
                None
            )
            .unwrap()
    );
    assert!(
        !first
            .take_over_item(item.id, Some("second"), &ClaimKey::new("first"))
            .unwrap()
    );
    // An item claimed with no claimant recorded (by an older ganger) is taken over from none.
    let old = store.enqueue(&start("old")).unwrap();
    assert!(
        store
            .move_item(
                old.id,
                QueueState::Queued,
                QueueState::Delivering,
                None,
                None
            )
            .unwrap()
    );
    assert!(
        first
            .take_over_item(old.id, None, &ClaimKey::new("first"))
            .unwrap()
    );
}

fn worker(name: &str, pid: u32) -> WorkerRecord {
    WorkerRecord {
        name: name.into(),
        host: "host-a".into(),
        pid,
        capacity: 4,
        agents: vec![WorkerAgent {
            name: "codex".into(),
            version: Some("0.63.0".into()),
        }],
        sandboxes: vec![SandboxKind::Local, SandboxKind::Bwrap],
        claim: ClaimKey::new(format!("worker-{name}")),
        started_at: 1_000,
        seen_at: 1_000,
        load: 0,
    }
}

pub fn workers_are_registered_seen_listed_and_removed(site: &dyn Site) {
    let mut store = site.connect();
    let other = site.connect();
    store.register_worker(&worker("b", 11)).unwrap();
    store.register_worker(&worker("a", 10)).unwrap();
    store.worker_seen("a", 3).unwrap();
    let listed = other.workers().unwrap();
    assert_eq!(
        listed.iter().map(|w| w.name.as_str()).collect::<Vec<_>>(),
        ["a", "b"]
    );
    assert_eq!(listed[0].load, 3);
    assert!(listed[0].seen_at > 1_000);
    assert_eq!(listed[1], worker("b", 11));
    // A worker started again under its name replaces its record.
    store.register_worker(&worker("a", 12)).unwrap();
    let again = other.workers().unwrap();
    assert_eq!((again.len(), again[0].pid, again[0].load), (2, 12, 0));
    store.remove_worker("b").unwrap();
    assert_eq!(other.workers().unwrap().len(), 1);
}

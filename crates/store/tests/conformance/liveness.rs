//! Liveness: a claim is alive while held, for every connection; a second claim of its name is
//! refused while it lives; it is dead once released (its waiters wake at once) or dropped (a
//! holder that died: noticed within the backend's lease), and its name can be claimed again;
//! the dead rounds are the running rounds whose host's claim is dead.

use super::fixtures::{done, new_task, round_claimed};
use super::{DEATH_NOTICED_WITHIN, Site, WAKES_WITHIN};
use ganger_store::{RoundKind, StoreError};
use std::time::{Duration, Instant};

pub fn a_claim_lives_while_held_and_is_dead_once_dropped(site: &dyn Site) {
    let holder = site.connect();
    let observer = site.connect();
    let claim = holder.claim("r-alive").unwrap();
    let key = claim.key().clone();
    // Work found by name (a fix loop) is found under the same key.
    assert_eq!(observer.claim_key("r-alive"), key);
    assert!(observer.is_alive(&key).unwrap());
    assert!(!observer.is_alive(&observer.claim_key("r-never")).unwrap());
    assert!(
        !observer
            .wait_for_end(&key, Some(Duration::from_millis(100)))
            .unwrap(),
        "a live claim does not end by itself"
    );
    match observer.claim("r-alive") {
        Err(StoreError::ClaimHeld { name }) => assert_eq!(name, "r-alive"),
        other => panic!("{other:?}"),
    }
    // Dropped: what a holder that dies does.
    drop(claim);
    assert!(
        observer
            .wait_for_end(&key, Some(DEATH_NOTICED_WITHIN))
            .unwrap()
    );
    assert!(!observer.is_alive(&key).unwrap());
    // The name is free again, and its new claim is as alive as the first was.
    let again = observer.claim("r-alive").unwrap();
    assert_eq!(again.key(), &key);
    assert!(holder.is_alive(&key).unwrap());
    again.release();
    assert!(!holder.is_alive(&key).unwrap());
    observer.forget_claim(&key);
    assert!(!holder.is_alive(&key).unwrap());
}

pub fn a_released_claim_wakes_its_waiter_at_once(site: &dyn Site) {
    let holder = site.connect();
    let claim = holder.claim("r-waited").unwrap();
    let key = claim.key().clone();
    // One waiter is told on a thread of the backend's, another waits itself.
    let (told, telling) = std::sync::mpsc::channel();
    holder
        .when_ended(
            &key,
            Box::new(move || {
                let _ = told.send(Instant::now());
            }),
        )
        .unwrap();
    let (woke, released) = std::thread::scope(|scope| {
        let waiter = scope.spawn(|| {
            let observer = site.connect();
            let ended = observer
                .wait_for_end(&key, Some(Duration::from_secs(10)))
                .unwrap();
            (ended, Instant::now())
        });
        // The waiter is asleep on the claim before it ends.
        std::thread::sleep(Duration::from_millis(300));
        assert!(
            !waiter.is_finished(),
            "the waiter woke while the claim lived"
        );
        assert!(
            telling.try_recv().is_err(),
            "told of an end while the claim lived"
        );
        let released = Instant::now();
        claim.release();
        (waiter.join().unwrap(), released)
    });
    let (ended, at) = woke;
    assert!(ended);
    assert!(
        at.duration_since(released) < WAKES_WITHIN,
        "woke {:?} after the release",
        at.duration_since(released)
    );
    let told_at = telling.recv_timeout(Duration::from_secs(10)).unwrap();
    assert!(
        told_at.duration_since(released) < WAKES_WITHIN,
        "told {:?} after the release",
        told_at.duration_since(released)
    );
    // A wait for a claim that has ended returns at once, and so does a watch.
    let (told, telling) = std::sync::mpsc::channel();
    holder
        .when_ended(
            &key,
            Box::new(move || {
                let _ = told.send(());
            }),
        )
        .unwrap();
    telling.recv_timeout(WAKES_WITHIN).unwrap();
    let started = Instant::now();
    assert!(holder.wait_for_end(&key, None).unwrap());
    assert!(started.elapsed() < WAKES_WITHIN);
}

pub fn the_dead_rounds_are_the_running_ones_whose_claim_is_dead(site: &dyn Site) {
    let mut store = site.connect();
    let live = store.claim("tok-live").unwrap();
    let dying = store.claim("tok-dying").unwrap();
    let finished = store.claim("tok-done").unwrap();
    let mut round_of = |slug: &str, claim: &ganger_store::Claim| {
        store
            .create_task(
                &new_task(slug, "alice"),
                &round_claimed(RoundKind::Start, slug, "alice", claim.key().clone()),
            )
            .unwrap()
    };
    let (_, live_round) = round_of("live", &live);
    let (dead_task, dead_round) = round_of("dead", &dying);
    let (_, done_round) = round_of("done", &finished);
    store.finish_round(done_round.id, &done()).unwrap();
    finished.release();
    let observer = site.connect();
    assert!(observer.dead_rounds().unwrap().is_empty());
    // The host of `dead` dies; `live` lives on and `done` ended properly.
    let key = dying.key().clone();
    drop(dying);
    assert!(
        observer
            .wait_for_end(&key, Some(DEATH_NOTICED_WITHIN))
            .unwrap()
    );
    let dead: Vec<(i64, i64)> = observer
        .dead_rounds()
        .unwrap()
        .iter()
        .map(|(task, round)| (task.id, round.id))
        .collect();
    assert_eq!(dead, [(dead_task.id, dead_round.id)]);
    assert!(observer.is_alive(&live_round.claim).unwrap());
    live.release();
}

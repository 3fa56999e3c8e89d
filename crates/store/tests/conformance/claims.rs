//! Work under way that is not a round, recorded before it makes or removes anything: a start
//! of a slug excludes another start of it until it ends (its task recorded, or the record
//! forgotten), and a clean of a task refuses a round of the task, and a second clean, while
//! it is recorded.

use super::Site;
use super::fixtures::{done, new_round, new_task};
use ganger_store::{ClaimKey, CleanClaim, PendingStart, RoundKind, StoreError, TaskUpdate};
use std::path::PathBuf;

fn pending(slug: &str, claim: &str) -> PendingStart {
    PendingStart {
        slug: slug.into(),
        worktree: PathBuf::from(format!("/tmp/repo-agent-{slug}")),
        branch: format!("agent/{slug}"),
        base_commit: "0".repeat(40),
        claim: ClaimKey::new(claim),
        commander: "alice".into(),
        started_at: 1,
    }
}

pub fn a_start_under_way_excludes_another_start_of_its_slug_until_it_ends(site: &dyn Site) {
    let mut first = site.connect();
    let mut second = site.connect();
    first.begin_start(&pending("s", "first")).unwrap();
    match second.begin_start(&pending("s", "second")) {
        Err(StoreError::StartPending { slug, claim }) => {
            assert_eq!((slug.as_str(), claim.as_str()), ("s", "first"));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(second.pending_starts().unwrap(), [pending("s", "first")]);
    // Only the record's own claim ends it.
    assert!(!second.end_start("s", &ClaimKey::new("second")).unwrap());
    assert!(second.end_start("s", &ClaimKey::new("first")).unwrap());
    assert!(first.pending_starts().unwrap().is_empty());
    // The second start goes ahead; recording its task ends its record.
    second.begin_start(&pending("s", "second")).unwrap();
    second
        .create_task(
            &new_task("s", "alice"),
            &new_round(RoundKind::Start, "s1", "alice"),
        )
        .unwrap();
    assert!(first.pending_starts().unwrap().is_empty());
    assert!(matches!(
        first.begin_start(&pending("s", "third")),
        Err(StoreError::SlugTaken(slug)) if slug == "s"
    ));
}

pub fn a_clean_under_way_refuses_rounds_and_a_second_clean(site: &dyn Site) {
    let mut cleaner = site.connect();
    let mut other = site.connect();
    let (task, round) = cleaner
        .create_task(
            &new_task("t", "alice"),
            &new_round(RoundKind::Start, "t1", "alice"),
        )
        .unwrap();
    let claim = |key: &str| CleanClaim {
        task_id: task.id,
        claim: ClaimKey::new(key),
        commander: "alice".into(),
        started_at: 1,
    };
    // Not while a round runs.
    assert!(matches!(
        cleaner.begin_clean(&claim("c1")),
        Err(StoreError::Busy { number: 1, .. })
    ));
    cleaner.finish_round(round.id, &done()).unwrap();
    cleaner.begin_clean(&claim("c1")).unwrap();
    assert_eq!(other.cleaning(task.id).unwrap(), Some(claim("c1")));
    match other.begin_clean(&claim("c2")) {
        Err(StoreError::BeingCleaned { slug, claim }) => {
            assert_eq!((slug.as_str(), claim.as_str()), ("t", "c1"));
        }
        other => panic!("{other:?}"),
    }
    let refused = other.begin_round(
        task.id,
        &new_round(RoundKind::Fix, "t2", "alice"),
        &TaskUpdate::default(),
    );
    assert!(
        matches!(&refused, Err(StoreError::BeingCleaned { claim, .. }) if claim.as_str() == "c1"),
        "{refused:?}"
    );
    assert_eq!(other.rounds(task.id).unwrap().len(), 1);
    // Only the claim's own key ends it; then a round may begin.
    assert!(!other.end_clean(task.id, &ClaimKey::new("c2")).unwrap());
    assert!(other.end_clean(task.id, &ClaimKey::new("c1")).unwrap());
    assert_eq!(cleaner.cleaning(task.id).unwrap(), None);
    let next = other
        .begin_round(
            task.id,
            &new_round(RoundKind::Fix, "t3", "alice"),
            &TaskUpdate::default(),
        )
        .unwrap();
    other.finish_round(next.id, &done()).unwrap();
    // A clean that is recorded done ends its claim with it.
    cleaner.begin_clean(&claim("c3")).unwrap();
    cleaner
        .mark_cleaned(task.id, "alice", serde_json::json!({}))
        .unwrap();
    assert_eq!(other.cleaning(task.id).unwrap(), None);
    let kinds: Vec<String> = other
        .journal(0, 100)
        .unwrap()
        .into_iter()
        .map(|e| e.kind)
        .filter(|k| k.starts_with("clean"))
        .collect();
    assert_eq!(kinds, ["clean-started", "clean-started", "cleaned"]);
}

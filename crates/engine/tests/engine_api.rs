//! The engine tier: the engine driven in-process through its API, as a long-running front end
//! (a daemon, an MCP server) drives it, with a `command` agent that needs no model: lookup and
//! admission, ownership and generations, the queue and the policy that holds rounds, report
//! building, notices on a channel, and many operations at once from one `Engine`. What needs a
//! real agent CLI stays in the CLI's end-to-end tests.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]

use ganger_engine::{
    Brief, Engine, ErrorKind, FixOptions, Inbound, Launched, Notice, OwnershipAction, Sent,
    StartOptions, StatusRequest, StatusView,
};
use ganger_events::RoundStatus;
use ganger_test_support::World;

/// A repository whose agent writes `work.txt` and says it is done.
fn world() -> World {
    let world = World::new("ganger-is-not-run-here".as_ref());
    world.use_command_agent(
        "cat >/dev/null; echo work >> work.txt; echo 'DONE: wrote work.txt'",
        "",
        "",
    );
    world
}

fn start(slug: &str) -> StartOptions {
    StartOptions {
        slug: slug.into(),
        brief: Some(Brief::Message(format!("the brief of {slug}"))),
        ..StartOptions::default()
    }
}

fn fix(slug: &str, commander: Option<&str>) -> FixOptions {
    FixOptions {
        slug: slug.into(),
        brief: Some(Brief::Message("again".into())),
        commander: commander.map(str::to_owned),
        ..FixOptions::default()
    }
}

/// The round a request ran in the foreground.
fn finished(sent: Sent) -> ganger_engine::HostOutcome {
    match sent {
        Sent::Launched(Launched::Finished(outcome)) => outcome,
        other => panic!("not a finished round: {other:?}"),
    }
}

fn quiet() -> impl FnMut(Notice) {
    |_| {}
}

#[test]
fn a_started_task_is_reported_as_the_status_shows_it() {
    let world = world();
    let engine = Engine::open(&world.repo, None, "alice").unwrap();
    let outcome = finished(engine.start(start("a"), false, &mut quiet()).unwrap());
    assert_eq!(outcome.round.status, RoundStatus::Done);
    assert_eq!(outcome.task.owner, "alice");
    let report = engine.outcome_report(&outcome);
    assert_eq!(report.status, RoundStatus::Done);
    assert_eq!(report.done.as_deref(), Some("DONE: wrote work.txt"));
    let request = StatusRequest {
        slug: Some("a".into()),
        tree: false,
    };
    let StatusView::Round(shown) = engine.status(&request, &mut quiet()).unwrap() else {
        panic!("no round report");
    };
    assert_eq!(
        serde_json::to_value(&*shown).unwrap(),
        serde_json::to_value(&report).unwrap(),
        "status and the round's own report differ"
    );
}

#[test]
fn lookup_and_admission_refuse_with_the_right_kind() {
    let world = world();
    let engine = Engine::open(&world.repo, None, "alice").unwrap();
    let unknown = engine
        .status(
            &StatusRequest {
                slug: Some("nope".into()),
                tree: false,
            },
            &mut quiet(),
        )
        .unwrap_err();
    assert_eq!(unknown.kind, ErrorKind::NotFound);
    assert_eq!(unknown.kind.exit_code(), 2);
    assert_eq!(unknown.message, "no task nope");
    let agent = engine
        .start(
            StartOptions {
                agent: Some("nobody".into()),
                ..start("b")
            },
            false,
            &mut quiet(),
        )
        .unwrap_err();
    assert_eq!(agent.kind, ErrorKind::Invalid);
    assert!(
        agent.message.contains("unknown agent \"nobody\""),
        "{agent}"
    );
    let empty = engine
        .start(
            StartOptions {
                brief: Some(Brief::Message("   ".into())),
                ..start("c")
            },
            false,
            &mut quiet(),
        )
        .unwrap_err();
    assert_eq!(empty.message, "the task text is empty");
    assert!(Engine::open(&world.repo, None, "two\nlines").is_err());
}

#[test]
fn only_the_owner_sends_rounds_and_a_transfer_ends_the_old_generation() {
    let world = world();
    let engine = Engine::open(&world.repo, None, "alice").unwrap();
    finished(engine.start(start("o"), false, &mut quiet()).unwrap());
    let refused = engine
        .fix(fix("o", Some("bob")), false, &mut quiet())
        .unwrap_err();
    assert_eq!(refused.kind, ErrorKind::Forbidden);
    assert_eq!(refused.kind.exit_code(), 2);
    assert!(refused.message.contains("owned by alice"), "{refused}");
    let moved = engine
        .ownership(
            "o",
            &OwnershipAction::Transfer { to: "bob".into() },
            None,
            &mut quiet(),
        )
        .unwrap();
    assert_eq!((moved.owner.as_str(), moved.generation), ("bob", 2));
    let second = finished(
        engine
            .fix(fix("o", Some("bob")), false, &mut quiet())
            .unwrap(),
    );
    assert_eq!(second.round.number, 2);
    assert_eq!(second.round.commander, "bob");
    let alice = engine.fix(fix("o", None), false, &mut quiet()).unwrap_err();
    assert!(alice.message.contains("owned by bob"), "{alice}");
}

#[test]
fn a_task_that_holds_new_rounds_queues_them_whoever_sends_them() {
    let world = world();
    let engine = Engine::open(&world.repo, None, "alice").unwrap();
    finished(engine.start(start("h"), false, &mut quiet()).unwrap());
    engine
        .ownership(
            "h",
            &OwnershipAction::Policy(Inbound::Hold),
            None,
            &mut quiet(),
        )
        .unwrap();
    match engine.fix(fix("h", None), false, &mut quiet()).unwrap() {
        Sent::Queued { item, held } => {
            assert!(held);
            assert_eq!(item.slug, "h");
        }
        other => panic!("not queued: {other:?}"),
    }
    // A queued round takes no --until-green: refused before anything is queued.
    let refused = engine
        .fix(
            FixOptions {
                until_green: Some(1),
                ..fix("h", None)
            },
            false,
            &mut quiet(),
        )
        .unwrap_err();
    assert_eq!(refused.kind, ErrorKind::Invalid);
    let queue = engine.fleet_status(None).unwrap();
    assert_eq!(queue.tasks.len(), 1, "{queue:?}");
}

#[test]
fn a_start_is_queued_once() {
    let world = world();
    let engine = Engine::open(&world.repo, None, "alice").unwrap();
    assert!(matches!(
        engine.start(start("q"), true, &mut quiet()).unwrap(),
        Sent::Queued { held: false, .. }
    ));
    let again = engine.start(start("q"), true, &mut quiet()).unwrap_err();
    assert_eq!(again.kind, ErrorKind::Conflict);
    assert_eq!(again.kind.exit_code(), 2);
    assert!(again.message.contains("queued already"), "{again}");
}

#[test]
fn notices_can_go_to_a_channel() {
    let world = world();
    let engine = Engine::open(&world.repo, None, "alice").unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let mut sink = tx;
    finished(engine.start(start("n"), false, &mut sink).unwrap());
    drop(sink);
    let notices: Vec<Notice> = rx.iter().collect();
    assert!(
        notices
            .iter()
            .any(|n| matches!(n, Notice::WorktreeCreated { .. })),
        "{notices:?}"
    );
    assert!(
        notices
            .iter()
            .any(|n| matches!(n, Notice::RoundStarted { number: 1, .. })),
        "{notices:?}"
    );
}

#[test]
fn one_engine_serves_many_operations_at_once() {
    let world = world();
    let engine = Engine::open(&world.repo, None, "alice").unwrap();
    let slugs: Vec<String> = (0..6).map(|n| format!("c{n}")).collect();
    let engine = &engine;
    std::thread::scope(|scope| {
        for slug in &slugs {
            scope.spawn(move || {
                let outcome = finished(engine.start(start(slug), false, &mut quiet()).unwrap());
                assert_eq!(outcome.round.status, RoundStatus::Done, "{slug}");
                let again = finished(engine.fix(fix(slug, None), false, &mut quiet()).unwrap());
                assert_eq!(again.round.number, 2, "{slug}");
            });
            scope.spawn(move || {
                engine
                    .status(&StatusRequest::default(), &mut quiet())
                    .unwrap();
            });
        }
    });
    let StatusView::List(list) = engine
        .status(&StatusRequest::default(), &mut quiet())
        .unwrap()
    else {
        panic!("no list");
    };
    assert_eq!(list.tasks.len(), 6);
    assert!(
        list.tasks
            .iter()
            .all(|t| t.rounds == 2 && t.last_status == Some(RoundStatus::Done)),
        "{:?}",
        list.tasks
    );
}

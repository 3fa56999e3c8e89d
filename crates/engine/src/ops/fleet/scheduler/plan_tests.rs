//! The plan as tables: each case is a view and the actions a pass over it takes, and pins one
//! rule of `plan.rs` (or of the limits and the offer it applies): with that rule taken out,
//! the case fails. The runner reports every case that fails, not only the first.

use super::{Action, Planner, plan};
use crate::ops::fleet::limits::Limits;
use crate::ops::fleet::offer::Offer;
use crate::ops::fleet::scheduler::view::{
    After, Defaults, InFlight, Need, QueuedTask, RunningRound, View,
};
use crate::task::rules::Inbound;
use ganger_events::{RoundStatus, SandboxKind};
use ganger_store::{QueueItem, QueueKind, QueueState};
use std::collections::BTreeMap;

const NOW: i64 = 1_000_000;

/// A view with nothing running, nothing paused, no limits and the whole queue read; the
/// defaults run agent-a on m1, locally.
fn view(queued: Vec<QueueItem>) -> View {
    View {
        now: NOW,
        defaults: Defaults {
            agent: "agent-a".into(),
            model: Some("m1".into()),
            sandbox: Some(SandboxKind::Local),
        },
        queued,
        queue_read: true,
        ..View::default()
    }
}

fn item(id: i64, slug: &str, kind: QueueKind) -> QueueItem {
    QueueItem {
        id,
        slug: slug.into(),
        kind,
        options: serde_json::json!({}),
        prompt_file: std::path::PathBuf::new(),
        prompt: Some("go".into()),
        commander: "me".into(),
        generation: None,
        fleet: None,
        after: Vec::new(),
        not_before: 0,
        state: QueueState::Queued,
        reason: None,
        round: None,
        claimed_at: None,
        claimed_by: None,
        created_at: 0,
        updated_at: 0,
    }
}

/// A queued start, with what its options name (`agent`, `model`, `sandbox`).
fn start(id: i64, slug: &str, options: serde_json::Value) -> QueueItem {
    QueueItem {
        options,
        ..item(id, slug, QueueKind::Start)
    }
}

fn fix(id: i64, slug: &str) -> QueueItem {
    item(id, slug, QueueKind::Fix)
}

fn in_fleet(fleet: &str, item: QueueItem) -> QueueItem {
    QueueItem {
        fleet: Some(fleet.into()),
        ..item
    }
}

fn after(slugs: &[&str], item: QueueItem) -> QueueItem {
    QueueItem {
        after: slugs.iter().map(|s| (*s).to_owned()).collect(),
        ..item
    }
}

fn not_before(at: i64, item: QueueItem) -> QueueItem {
    QueueItem {
        not_before: at,
        ..item
    }
}

fn none() -> serde_json::Value {
    serde_json::json!({})
}

fn running(slug: &str, agent: &str, model: Option<&str>) -> RunningRound {
    RunningRound {
        slug: slug.into(),
        agent: agent.into(),
        model: model.map(str::to_owned),
    }
}

fn flying(slug: &str, delivering: bool, mine: bool) -> InFlight {
    InFlight {
        slug: slug.into(),
        delivering,
        mine,
    }
}

fn task(model: &str, inbound: Inbound) -> Option<QueuedTask> {
    Some(QueuedTask {
        id: 7,
        agent: "agent-a".into(),
        model: Some(model.into()),
        sandbox: SandboxKind::Local,
        inbound,
    })
}

fn tasks(list: Vec<(&str, Option<QueuedTask>)>) -> BTreeMap<String, Option<QueuedTask>> {
    list.into_iter().map(|(s, t)| (s.to_owned(), t)).collect()
}

fn map<V>(list: Vec<(&str, V)>) -> BTreeMap<String, V> {
    list.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()
}

fn agents(list: Vec<(&str, u32)>) -> Limits {
    Limits {
        agents: map(list),
        ..Limits::default()
    }
}

fn worker(capacity: usize, agents: &[&str], sandboxes: &[&str]) -> Option<Offer> {
    Some(Offer {
        name: "w".into(),
        capacity,
        agents: agents.iter().map(|a| (*a).to_owned()).collect(),
        sandboxes: sandboxes.iter().map(|s| s.parse().unwrap()).collect(),
    })
}

/// A view that holds conflicting tasks apart: `pairs` conflict (listed both ways, as the
/// view reads them), `landing` are queued to land.
fn serializing(pairs: &[(&str, &str)], landing: &[&str], queued: Vec<QueueItem>) -> View {
    let mut conflicts: BTreeMap<String, std::collections::BTreeSet<String>> = BTreeMap::new();
    for (a, b) in pairs {
        conflicts
            .entry((*a).into())
            .or_default()
            .insert((*b).into());
        conflicts
            .entry((*b).into())
            .or_default()
            .insert((*a).into());
    }
    View {
        serialize: true,
        conflicts,
        landing: landing.iter().map(|s| (*s).to_owned()).collect(),
        ..view(queued)
    }
}

/// Tasks on m1 whose rules accept inbound rounds.
fn accepting(slugs: &[&str]) -> BTreeMap<String, Option<QueuedTask>> {
    slugs
        .iter()
        .map(|s| ((*s).to_owned(), task("m1", Inbound::Accept)))
        .collect()
}

use Action::{Deliver, Read, Refuse, ToLane, WakeAt};

/// Item `item` held by the active tasks `by` (`b (landing)`).
fn held(item: i64, by: &str) -> Action {
    Action::Held {
        item,
        why: format!(
            "waits for {by}: their work is predicted to conflict ([fleet] conflicts = \"serialize\")"
        ),
    }
}

fn lane(item: i64, remote: &str) -> Action {
    ToLane {
        item,
        remote: remote.into(),
    }
}

/// One row: the rule it pins, the view, and what a pass over it does.
struct Case {
    rule: &'static str,
    view: View,
    wants: Vec<Action>,
}

fn cases() -> Vec<Case> {
    let later = NOW + 5_000;
    vec![
        Case {
            rule: "the queue is read a page at a time, as far as the walk goes",
            view: View {
                queue_read: false,
                ..view(vec![start(1, "a", none())])
            },
            wants: vec![Deliver(1), Read(Need::Page)],
        },
        Case {
            rule: "once the global limit is reached, the walk ends and reads no further",
            view: View {
                limits: Limits {
                    global: Some(2),
                    ..Limits::default()
                },
                running: vec![running("x", "agent-a", Some("m1"))],
                queue_read: false,
                ..view(vec![start(1, "a", none()), start(2, "b", none())])
            },
            wants: vec![Deliver(1)],
        },
        Case {
            rule: "the global limit holds before a task is read",
            view: View {
                limits: Limits {
                    global: Some(1),
                    ..Limits::default()
                },
                running: vec![running("x", "agent-a", Some("m1"))],
                ..view(vec![fix(1, "a")])
            },
            wants: vec![],
        },
        Case {
            rule: "a limit per agent counts the rounds running",
            view: View {
                limits: agents(vec![("agent-b", 1)]),
                running: vec![running("x", "agent-b", None)],
                ..view(vec![
                    start(1, "a", serde_json::json!({"agent": "agent-b"})),
                    start(2, "b", none()),
                ])
            },
            wants: vec![Deliver(2)],
        },
        Case {
            rule: "a limit per model counts the rounds running",
            view: View {
                limits: Limits {
                    models: map(vec![("m2", 1)]),
                    ..Limits::default()
                },
                running: vec![running("x", "agent-a", Some("m2"))],
                ..view(vec![
                    start(1, "a", serde_json::json!({"model": "m2"})),
                    start(2, "b", none()),
                ])
            },
            wants: vec![Deliver(2)],
        },
        Case {
            rule: "the limits count the rounds claimed in the pass",
            view: View {
                limits: agents(vec![("agent-a", 1)]),
                ..view(vec![start(1, "a", none()), start(2, "b", none())])
            },
            wants: vec![Deliver(1)],
        },
        Case {
            rule: "a fleet's own limits hold for its items, and only for them",
            view: View {
                fleet_limits: map(vec![("f", agents(vec![("agent-a", 1)]))]),
                running: vec![running("x", "agent-a", Some("m1"))],
                ..view(vec![
                    in_fleet("f", start(1, "a", none())),
                    start(2, "b", none()),
                ])
            },
            wants: vec![Deliver(2)],
        },
        Case {
            rule: "an item on a paused model waits",
            view: View {
                pauses: map(vec![("m1", later)]),
                ..view(vec![
                    start(1, "a", none()),
                    start(2, "b", serde_json::json!({"model": "m2"})),
                ])
            },
            wants: vec![Deliver(2), WakeAt(later)],
        },
        Case {
            rule: "a pause that ended holds nothing and wakes nobody",
            view: View {
                pauses: map(vec![("m1", NOW - 1)]),
                ..view(vec![start(1, "a", none())])
            },
            wants: vec![Deliver(1)],
        },
        Case {
            rule: "the next pass is due when a pause ends",
            view: View {
                pauses: map(vec![("m9", later)]),
                ..view(vec![])
            },
            wants: vec![WakeAt(later)],
        },
        Case {
            rule: "an item not due yet waits, and the next pass is due when it is",
            view: view(vec![
                not_before(NOW + 3_000, start(1, "a", none())),
                start(2, "b", none()),
            ]),
            wants: vec![Deliver(2), WakeAt(NOW + 3_000)],
        },
        Case {
            rule: "the next pass is due at the earliest of the pauses and the items not due",
            view: View {
                pauses: map(vec![("m9", later)]),
                ..view(vec![
                    not_before(NOW + 3_000, start(1, "a", none())),
                    not_before(NOW + 8_000, start(2, "b", none())),
                ])
            },
            wants: vec![WakeAt(NOW + 3_000)],
        },
        Case {
            rule: "an item waits while a task it comes after has an open item",
            view: View {
                after: map(vec![("x", After::Open)]),
                ..view(vec![after(&["x"], start(1, "a", none()))])
            },
            wants: vec![],
        },
        Case {
            rule: "an item runs once every task it comes after ended done",
            view: View {
                after: map(vec![
                    ("x", After::Last(Some(RoundStatus::Done))),
                    ("y", After::Last(Some(RoundStatus::Done))),
                ]),
                ..view(vec![after(&["x", "y"], start(1, "a", none()))])
            },
            wants: vec![Deliver(1)],
        },
        Case {
            rule: "an item coming after a task that ended otherwise is refused",
            view: View {
                after: map(vec![("x", After::Last(Some(RoundStatus::Failed)))]),
                ..view(vec![after(&["x"], start(1, "a", none()))])
            },
            wants: vec![Refuse {
                item: 1,
                reason: "it comes after x, which ended failed".into(),
            }],
        },
        Case {
            rule: "an item waits for a task it comes after that does not exist yet",
            view: View {
                after: map(vec![("x", After::NoTask)]),
                ..view(vec![after(&["x"], start(1, "a", none()))])
            },
            wants: vec![],
        },
        Case {
            rule: "an item waits for a task it comes after that runs or never ran",
            view: View {
                after: map(vec![
                    ("x", After::Last(None)),
                    ("y", After::Last(Some(RoundStatus::Running))),
                ]),
                ..view(vec![
                    after(&["x"], start(1, "a", none())),
                    after(&["y"], start(2, "b", none())),
                ])
            },
            wants: vec![],
        },
        Case {
            rule: "every task an item comes after counts, each read when it is reached",
            view: View {
                after: map(vec![("x", After::Last(Some(RoundStatus::Done)))]),
                ..view(vec![after(&["x", "y"], start(1, "a", none()))])
            },
            wants: vec![Read(Need::After("y".into()))],
        },
        Case {
            rule: "one round per task: a task with a running round takes no item",
            view: View {
                running: vec![running("a", "agent-a", Some("m1"))],
                tasks: tasks(vec![("a", task("m1", Inbound::Accept))]),
                ..view(vec![fix(1, "a")])
            },
            wants: vec![],
        },
        Case {
            rule: "one round per task: a task with an item in flight takes no other",
            view: View {
                in_flight: vec![flying("a", false, false)],
                tasks: tasks(vec![("a", task("m1", Inbound::Accept))]),
                ..view(vec![fix(1, "a")])
            },
            wants: vec![],
        },
        Case {
            rule: "queue order per task: an item waits behind an older one of its task",
            view: View {
                after: map(vec![("x", After::Open)]),
                tasks: tasks(vec![("a", task("m1", Inbound::Accept))]),
                ..view(vec![after(&["x"], fix(1, "a")), fix(2, "a")])
            },
            wants: vec![],
        },
        Case {
            rule: "a worker's walk ends at its capacity",
            view: View {
                offer: worker(2, &["agent-a"], &["local"]),
                in_flight: vec![flying("x", true, true)],
                queue_read: false,
                ..view(vec![start(1, "a", none()), start(2, "b", none())])
            },
            wants: vec![Deliver(1)],
        },
        Case {
            rule: "a worker's load is its own items only, delivered ones while they run",
            view: View {
                offer: worker(1, &["agent-a"], &["local"]),
                in_flight: vec![flying("x", false, true), flying("y", true, false)],
                ..view(vec![start(1, "a", none())])
            },
            wants: vec![Deliver(1)],
        },
        Case {
            rule: "a worker's load counts its delivered items whose round runs",
            view: View {
                offer: worker(1, &["agent-a"], &["local"]),
                running: vec![running("x", "agent-a", Some("m1"))],
                in_flight: vec![flying("x", false, true)],
                ..view(vec![start(1, "a", none())])
            },
            wants: vec![],
        },
        Case {
            rule: "a worker leaves the agents it does not offer to others",
            view: View {
                offer: worker(5, &["agent-a"], &["local"]),
                ..view(vec![
                    start(1, "a", serde_json::json!({"agent": "agent-b"})),
                    start(2, "b", none()),
                ])
            },
            wants: vec![Deliver(2)],
        },
        Case {
            rule: "a worker leaves the sandboxes it does not offer to others",
            view: View {
                offer: worker(5, &["agent-a"], &["local"]),
                ..view(vec![
                    start(1, "a", serde_json::json!({"sandbox": "docker"})),
                    start(2, "b", none()),
                ])
            },
            wants: vec![Deliver(2)],
        },
        Case {
            rule: "a start runs the agent and sandbox its options name, else the defaults",
            view: View {
                offer: worker(5, &["agent-b"], &["docker"]),
                ..view(vec![
                    start(
                        1,
                        "a",
                        serde_json::json!({"agent": "agent-b", "sandbox": "docker"}),
                    ),
                    start(2, "b", none()),
                ])
            },
            wants: vec![Deliver(1)],
        },
        Case {
            rule: "a task whose rules hold inbound rounds takes no item",
            view: View {
                tasks: tasks(vec![
                    ("a", task("m1", Inbound::Hold)),
                    ("b", task("m1", Inbound::Accept)),
                ]),
                ..view(vec![fix(1, "a"), fix(2, "b")])
            },
            wants: vec![Deliver(2)],
        },
        Case {
            rule: "serialize: a fix waits while its task conflicts with a running task's work",
            view: View {
                running: vec![running("b", "agent-a", Some("m1"))],
                tasks: accepting(&["a", "c"]),
                ..serializing(&[("a", "b")], &[], vec![fix(1, "a"), fix(2, "c")])
            },
            wants: vec![held(1, "b (running)"), Deliver(2)],
        },
        Case {
            rule: "serialize: a fix waits while the task it conflicts with is in flight",
            view: View {
                in_flight: vec![flying("b", false, false)],
                tasks: accepting(&["a"]),
                ..serializing(&[("b", "a")], &[], vec![fix(1, "a")])
            },
            wants: vec![held(1, "b (running)")],
        },
        Case {
            rule: "serialize: a fix waits while the task it conflicts with is queued to land",
            view: View {
                tasks: accepting(&["a"]),
                ..serializing(&[("a", "b")], &["b"], vec![fix(1, "a")])
            },
            wants: vec![held(1, "b (landing)")],
        },
        Case {
            rule: "serialize: of two conflicting tasks' fixes, the older goes and the other waits",
            view: View {
                tasks: accepting(&["a", "b"]),
                ..serializing(&[("a", "b")], &[], vec![fix(1, "b"), fix(2, "a")])
            },
            wants: vec![Deliver(1), held(2, "b (running)")],
        },
        Case {
            rule: "serialize: a task conflicting with an idle one (not running, not landing) goes",
            view: View {
                tasks: accepting(&["a"]),
                ..serializing(&[("a", "b")], &["c"], vec![fix(1, "a")])
            },
            wants: vec![Deliver(1)],
        },
        Case {
            rule: "warn (the default): a conflict with a running task holds nothing",
            view: View {
                running: vec![running("b", "agent-a", Some("m1"))],
                tasks: accepting(&["a"]),
                serialize: false,
                ..serializing(&[("a", "b")], &["b"], vec![fix(1, "a")])
            },
            wants: vec![Deliver(1)],
        },
        Case {
            rule: "a queued fix's task is read before it is decided on",
            view: view(vec![fix(1, "a")]),
            wants: vec![Read(Need::Task("a".into()))],
        },
        Case {
            rule: "a fix runs its task's agent and model, not the defaults",
            view: View {
                pauses: map(vec![("m1", later)]),
                tasks: tasks(vec![
                    ("a", task("m2", Inbound::Accept)),
                    ("b", task("m1", Inbound::Accept)),
                ]),
                ..view(vec![fix(1, "a"), fix(2, "b")])
            },
            wants: vec![Deliver(1), WakeAt(later)],
        },
        Case {
            rule: "an item of a fleet with a remote goes to the remote's lane",
            view: View {
                remotes: map(vec![("f", "ssh://r/repo".to_owned())]),
                ..view(vec![
                    in_fleet("f", start(1, "a", none())),
                    in_fleet("g", start(2, "b", none())),
                    start(3, "c", none()),
                ])
            },
            wants: vec![lane(1, "ssh://r/repo"), Deliver(2), Deliver(3)],
        },
        Case {
            rule: "a fix queued by hand to a task of a fleet with a remote goes to its lane",
            view: View {
                remotes: map(vec![("f", "ssh://r/repo".to_owned())]),
                tasks: tasks(vec![("a", task("m1", Inbound::Accept))]),
                task_fleets: map(vec![("a", Some("f".to_owned()))]),
                ..view(vec![fix(1, "a")])
            },
            wants: vec![lane(1, "ssh://r/repo")],
        },
        Case {
            rule: "a task's fleet is read only when some fleet has a remote",
            view: View {
                tasks: tasks(vec![("a", task("m1", Inbound::Accept))]),
                ..view(vec![fix(1, "a")])
            },
            wants: vec![Deliver(1)],
        },
    ]
}

#[test]
fn each_rule_of_the_plan_holds_in_its_case() {
    let cases = cases();
    let failed: Vec<String> = cases
        .iter()
        .filter_map(|case| {
            let got = plan(&case.view);
            (got != case.wants).then(|| {
                format!(
                    "{}:\n    got    {got:?}\n    wanted {:?}",
                    case.rule, case.wants
                )
            })
        })
        .collect();
    assert!(
        failed.is_empty(),
        "{} of {} cases failed:\n{}",
        failed.len(),
        cases.len(),
        failed.join("\n")
    );
}

#[test]
fn a_claim_another_scheduler_won_counts_for_nothing() {
    let view = View {
        limits: agents(vec![("agent-a", 1)]),
        ..view(vec![start(1, "a", none()), start(2, "b", none())])
    };
    let mut planner = Planner::new(&view);
    assert_eq!(planner.next(&view), Some(Deliver(1)));
    planner.lost();
    assert_eq!(planner.next(&view), Some(Deliver(2)));
    assert_eq!(planner.next(&view), None);
    assert_eq!(planner.load(), 1);
}

#[test]
fn a_walk_stopped_for_a_read_goes_on_from_the_same_item() {
    let mut view = View {
        queue_read: false,
        ..view(vec![])
    };
    let mut planner = Planner::new(&view);
    assert_eq!(planner.next(&view), Some(Read(Need::Page)));
    view.queued = vec![fix(1, "a"), fix(2, "a")];
    view.queue_read = true;
    assert_eq!(planner.next(&view), Some(Read(Need::Task("a".into()))));
    view.tasks = tasks(vec![("a", task("m1", Inbound::Accept))]);
    assert_eq!(planner.next(&view), Some(Deliver(1)));
    assert_eq!(planner.next(&view), None);
}

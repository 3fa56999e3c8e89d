//! Budgets: a task's (`ganger start --budget-usd/--budget-tokens`) and its fleet's (set by the
//! scheduler through the store), counted from the rounds' usage as it streams. The round host
//! checks them while the agent works and stops a round that reaches one ([`BudgetWatch`]);
//! `fix` and the scheduler start no round of a task that has spent its budget
//! ([`exhausted`]). Spending is the rounds' cost (the agent's, else `ganger.toml`'s price
//! table) and their input, output and reasoning tokens.

use crate::base::config::Price;
use crate::env::workspace::Workspace;
use ganger_events::{RoundSummary, Tokens};
use ganger_store::{Budget, EvidenceStore, Round, Spent, Store, Task};
use serde::Serialize;
use std::time::{Duration, Instant};

/// How often a running round re-reads what the rest of its fleet (or race) spent.
const SHARED_REREAD: Duration = Duration::from_secs(1);

/// Turns a running round's summary into its own figures: session totals (of agents that report
/// them) less
/// what the session had before the round, and a cost from the price table when the agent
/// reports none. The host stores this settled copy while the round runs, so that sums over
/// the stored summaries count every round's own spending.
#[derive(Debug, Clone, Default)]
pub(crate) struct RoundSpend {
    task_id: i64,
    number: u32,
    session: Option<String>,
    /// The session's totals before the round, once looked up (only for agents that report
    /// session totals, on their first report).
    previous: Option<Option<Tokens>>,
    price: Option<Price>,
}

impl RoundSpend {
    /// The figures' settling for `round` of `task`.
    pub(crate) fn of(ws: &Workspace, task: &Task, round: &Round) -> RoundSpend {
        RoundSpend {
            task_id: task.id,
            number: round.number,
            session: round.session_before.clone(),
            previous: None,
            price: round
                .model
                .as_deref()
                .and_then(|model| ws.config.prices.get(model))
                .copied(),
        }
    }

    /// The summary with the round's own figures.
    pub(crate) fn settle(&mut self, store: &dyn Store, summary: &RoundSummary) -> RoundSummary {
        let mut settled = summary.clone();
        if settled.session_tokens.is_some() {
            let (task_id, number, session) = (self.task_id, self.number, self.session.as_deref());
            let previous = *self
                .previous
                .get_or_insert_with(|| previous_session_tokens(store, task_id, number, session));
            settled.settle_session_tokens(previous);
        }
        if settled.cost_usd.is_none()
            && let Some(price) = &self.price
        {
            settled.cost_usd = Some(price.cost(&settled.tokens));
        }
        settled
    }
}

/// The session totals at the end of the last round before `number` that ran in `session`.
pub(crate) fn previous_session_tokens(
    store: &dyn Store,
    task_id: i64,
    number: u32,
    session: Option<&str>,
) -> Option<Tokens> {
    let session = session?;
    (1..number).rev().find_map(|earlier| {
        let round = store.round(task_id, Some(earlier)).ok().flatten()?;
        (round.session.as_deref() == Some(session))
            .then_some(round.summary.session_tokens)
            .flatten()
    })
}

/// What one round spent, from its settled summary.
pub(crate) fn spent_by(summary: &RoundSummary) -> Spent {
    Spent {
        usd: summary.cost_usd.unwrap_or(0.0),
        tokens: summary.budget_tokens(),
    }
}

/// Why `spent` reached `budget`, naming whose budget it is (`task hello`, `fleet nightly`).
fn reached(budget: &Budget, spent: Spent, whose: &str) -> Option<String> {
    if let Some(limit) = budget.tokens
        && spent.tokens >= limit
    {
        return Some(format!(
            "budget of {limit} tokens for {whose} reached (spent {})",
            spent.tokens
        ));
    }
    if let Some(limit) = budget.usd
        && spent.usd >= limit
    {
        return Some(format!(
            "budget of ${limit:.4} for {whose} reached (spent ${:.4})",
            spent.usd
        ));
    }
    None
}

fn add(a: Spent, b: Spent) -> Spent {
    Spent {
        usd: a.usd + b.usd,
        tokens: a.tokens + b.tokens,
    }
}

/// Why no new round of `task` may start, if its budget, its race's or its fleet's is spent.
pub(crate) fn exhausted(store: &(impl EvidenceStore + ?Sized), task: &Task) -> Option<String> {
    let budget = store.task_budget(task.id).ok()?;
    if budget.is_set()
        && let Ok(spent) = store.task_spent(task.id, None)
        && let Some(why) = reached(&budget, spent, &format!("task {}", task.slug))
    {
        return Some(why);
    }
    let fleet = store.task_fleet(task.id).ok().flatten();
    if let Some(why) = race_exhausted(store, &task.slug, fleet.as_deref()) {
        return Some(why);
    }
    fleet_exhausted(store, &fleet?)
}

/// The name of the fleet whose budget is the race `race`'s (`ganger race --budget-*`, a fleet
/// file's race task's `budget`): `race:SLUG`.
pub(crate) fn race_budget_fleet(race: &str) -> String {
    format!("race:{race}")
}

/// The race whose budget holds the task `slug` (an attempt `RACE.N` or a judge `RACE.jAvB`),
/// with that budget, when it has one and the task does not belong to the race's own fleet
/// (there the fleet's budget is the race's already). A fleet file's race keeps its attempts in
/// the file's fleet, so that the file's budget holds them too; its own is this one.
fn race_pool(
    store: &(impl EvidenceStore + ?Sized),
    slug: &str,
    fleet: Option<&str>,
) -> Option<(String, Budget)> {
    let (race, _) = slug.split_once('.')?;
    let name = race_budget_fleet(race);
    if fleet == Some(name.as_str()) {
        return None;
    }
    let budget = store.fleet_budget(&name).ok().filter(Budget::is_set)?;
    Some((race.to_owned(), budget))
}

/// Why no new round of the task `slug` (of the fleet `fleet`) may start, if the budget of the
/// race it belongs to is spent ([`race_pool`]).
pub(crate) fn race_exhausted(
    store: &(impl EvidenceStore + ?Sized),
    slug: &str,
    fleet: Option<&str>,
) -> Option<String> {
    let (race, budget) = race_pool(store, slug, fleet)?;
    let spent = store.race_spent(&race, None).ok()?;
    reached(&budget, spent, &format!("race {race}"))
}

/// Why no new round of the fleet `fleet` may start, if its budget is spent.
pub(crate) fn fleet_exhausted(
    store: &(impl EvidenceStore + ?Sized),
    fleet: &str,
) -> Option<String> {
    let budget = store.fleet_budget(fleet).ok()?;
    if !budget.is_set() {
        return None;
    }
    let spent = store.fleet_spent(fleet, None).ok()?;
    reached(&budget, spent, &format!("fleet {fleet}"))
}

/// A budget and what was spent against it, for reports.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct BudgetUse {
    /// The limits (`None`: no limit of that kind).
    pub usd: Option<f64>,
    pub tokens: Option<u64>,
    /// What the rounds spent (running ones as far as their stored summary goes).
    pub spent_usd: f64,
    pub spent_tokens: u64,
}

/// A fleet's budget and what its tasks spent.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FleetBudgetUse {
    pub fleet: String,
    #[serde(flatten)]
    pub budget: BudgetUse,
}

/// The budgets a task is held to, for its reports.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Budgets {
    pub task: Option<BudgetUse>,
    pub fleet: Option<FleetBudgetUse>,
}

fn budget_use(budget: Budget, spent: Spent) -> BudgetUse {
    BudgetUse {
        usd: budget.usd,
        tokens: budget.tokens,
        spent_usd: spent.usd,
        spent_tokens: spent.tokens,
    }
}

/// The budgets of `task` and what was spent, if it has any (its own, or its fleet's).
pub(crate) fn budgets_of(store: &(impl EvidenceStore + ?Sized), task: &Task) -> Option<Budgets> {
    let own = store.task_budget(task.id).ok().filter(Budget::is_set);
    let task_use = match own {
        Some(budget) => Some(budget_use(budget, store.task_spent(task.id, None).ok()?)),
        None => None,
    };
    let fleet = store.task_fleet(task.id).ok().flatten().and_then(|name| {
        let budget = store.fleet_budget(&name).ok().filter(Budget::is_set)?;
        let spent = store.fleet_spent(&name, None).ok()?;
        Some(FleetBudgetUse {
            fleet: name,
            budget: budget_use(budget, spent),
        })
    });
    (task_use.is_some() || fleet.is_some()).then_some(Budgets {
        task: task_use,
        fleet,
    })
}

/// A running round's budgets: its task's, with what the task's other rounds spent, and those
/// it shares (its race's, its fleet's), with what their other rounds spent (read again every
/// second, since other rounds of the race or fleet run at the same time).
#[derive(Debug)]
pub(crate) struct BudgetWatch {
    slug: String,
    round_id: i64,
    task: Option<(Budget, Spent)>,
    shared: Vec<SharedBudget>,
}

/// A budget that other tasks' rounds count against too.
#[derive(Debug)]
struct SharedBudget {
    pool: Pool,
    budget: Budget,
    others: Spent,
    read_at: Instant,
}

/// Whose rounds a shared budget counts.
#[derive(Debug)]
enum Pool {
    /// The tasks of a fleet, by its name.
    Fleet(String),
    /// The tasks of a race (its attempts and judges), by its slug.
    Race(String),
}

impl Pool {
    fn spent(&self, store: &dyn Store, except: i64) -> Option<Spent> {
        match self {
            Pool::Fleet(name) => store.fleet_spent(name, Some(except)).ok(),
            Pool::Race(slug) => store.race_spent(slug, Some(except)).ok(),
        }
    }

    fn whose(&self) -> String {
        match self {
            Pool::Fleet(name) => format!("fleet {name}"),
            Pool::Race(slug) => format!("race {slug}"),
        }
    }
}

impl SharedBudget {
    fn of(store: &dyn Store, pool: Pool, budget: Budget, round_id: i64) -> Option<SharedBudget> {
        let others = pool.spent(store, round_id)?;
        Some(SharedBudget {
            pool,
            budget,
            others,
            read_at: Instant::now(),
        })
    }
}

impl BudgetWatch {
    /// The budgets of `round` of `task`, as the store has them now.
    pub(crate) fn of(store: &dyn Store, task: &Task, round: &Round) -> BudgetWatch {
        let task_budget = store
            .task_budget(task.id)
            .ok()
            .filter(Budget::is_set)
            .and_then(|budget| Some((budget, store.task_spent(task.id, Some(round.id)).ok()?)));
        let fleet = store.task_fleet(task.id).ok().flatten();
        let race = race_pool(store, &task.slug, fleet.as_deref())
            .and_then(|(race, budget)| SharedBudget::of(store, Pool::Race(race), budget, round.id));
        let fleet = fleet.and_then(|name| {
            let budget = store.fleet_budget(&name).ok().filter(Budget::is_set)?;
            SharedBudget::of(store, Pool::Fleet(name), budget, round.id)
        });
        BudgetWatch {
            slug: task.slug.clone(),
            round_id: round.id,
            task: task_budget,
            shared: race.into_iter().chain(fleet).collect(),
        }
    }

    /// Whether there is a budget to watch at all.
    pub(crate) fn is_set(&self) -> bool {
        self.task.is_some() || !self.shared.is_empty()
    }

    /// Why the round must stop, if a budget is reached with what it spent so far (`settled`).
    pub(crate) fn check(&mut self, store: &dyn Store, settled: &RoundSummary) -> Option<String> {
        let live = spent_by(settled);
        if let Some((budget, others)) = &self.task
            && let Some(why) = reached(budget, add(*others, live), &format!("task {}", self.slug))
        {
            return Some(why);
        }
        for shared in &mut self.shared {
            if shared.read_at.elapsed() >= SHARED_REREAD {
                if let Some(others) = shared.pool.spent(store, self.round_id) {
                    shared.others = others;
                }
                shared.read_at = Instant::now();
            }
            let whose = shared.pool.whose();
            if let Some(why) = reached(&shared.budget, add(shared.others, live), &whose) {
                return Some(why);
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_budget_is_reached_at_its_limit_and_names_whose_it_is() {
        let tokens = Budget {
            usd: None,
            tokens: Some(100),
        };
        let under = Spent {
            usd: 5.0,
            tokens: 99,
        };
        assert_eq!(reached(&tokens, under, "task a"), None);
        let at = Spent {
            usd: 0.0,
            tokens: 100,
        };
        assert_eq!(
            reached(&tokens, at, "task a").as_deref(),
            Some("budget of 100 tokens for task a reached (spent 100)")
        );
        let usd = Budget {
            usd: Some(0.5),
            tokens: None,
        };
        let over = Spent {
            usd: 0.75,
            tokens: 0,
        };
        assert_eq!(
            reached(&usd, over, "fleet nightly").as_deref(),
            Some("budget of $0.5000 for fleet nightly reached (spent $0.7500)")
        );
        assert_eq!(reached(&Budget::default(), over, "task a"), None);
    }

    fn stored_task(store: &mut dyn ganger_store::Backend, slug: &str) -> (Task, Round) {
        use ganger_store::{NewRound, NewTask, RoundKind};
        let task = NewTask {
            slug: slug.into(),
            agent: ganger_agents::DEFAULT_AGENT.into(),
            model: None,
            base: "main".into(),
            base_commit: None,
            branch: format!("agent/{slug}"),
            worktree: format!("/tmp/{slug}").into(),
            worktree_made: true,
            owner: "boss".into(),
            keys: Default::default(),
            timeout_ms: None,
            stall_ms: None,
            permission: ganger_events::Permission::Write,
            sandbox: ganger_events::SandboxKind::Local,
            network: ganger_events::Network::Shared,
            rw: Vec::new(),
            allow: Vec::new(),
            warm: None,
            labels: Vec::new(),
            budget: ganger_store::Budget::default(),
            fleet: None,
        };
        let round = NewRound {
            kind: RoundKind::Start,
            model: None,
            session_before: None,
            commander: "boss".into(),
            token: slug.into(),
            claim: ganger_store::ClaimKey::new(format!("/tmp/{slug}.lock")),
            host: None,
            snapshot_before: None,
            checks: Vec::new(),
            generation: None,
        };
        store.create_task(&task, &round).unwrap()
    }

    fn costing(usd: f64) -> RoundSummary {
        RoundSummary {
            cost_usd: Some(usd),
            ..RoundSummary::default()
        }
    }

    #[test]
    fn a_fleets_budget_counts_its_other_tasks_and_stops_the_round_that_reaches_it() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = crate::env::workspace::open_backend(&dir.path().join("state.db")).unwrap();
        let (first, first_round) = stored_task(&mut *store, "first");
        let (second, second_round) = stored_task(&mut *store, "second");
        store.set_fleet_budget("nightly", Some(1.0), None).unwrap();
        store.set_task_fleet(first.id, Some("nightly")).unwrap();
        store.set_task_fleet(second.id, Some("nightly")).unwrap();
        // The other task's running round has spent $0.70 so far.
        store
            .record_progress(first_round.id, &costing(0.7), 0)
            .unwrap();
        let mut watch = BudgetWatch::of(&*store, &second, &second_round);
        assert!(watch.is_set());
        assert_eq!(watch.check(&*store, &costing(0.2)), None);
        assert_eq!(
            watch.check(&*store, &costing(0.3)).as_deref(),
            Some("budget of $1.0000 for fleet nightly reached (spent $1.0000)")
        );
        assert_eq!(exhausted(&*store, &second), None);
        store
            .record_progress(second_round.id, &costing(0.3), 0)
            .unwrap();
        assert_eq!(
            exhausted(&*store, &second).as_deref(),
            Some("budget of $1.0000 for fleet nightly reached (spent $1.0000)")
        );
        assert!(fleet_exhausted(&*store, "nightly").is_some());
        assert_eq!(fleet_exhausted(&*store, "other"), None);
        // A task's own budget is checked first, and named.
        store
            .set_task_budget(
                first.id,
                &Budget {
                    usd: Some(0.5),
                    tokens: None,
                },
            )
            .unwrap();
        assert_eq!(
            exhausted(&*store, &first).as_deref(),
            Some("budget of $0.5000 for task first reached (spent $0.7000)")
        );
    }

    #[test]
    fn a_running_round_is_priced_from_its_own_tokens() {
        let dir = tempfile::tempdir().unwrap();
        let store = crate::env::workspace::open_backend(&dir.path().join("state.db")).unwrap();
        let mut spend = RoundSpend {
            previous: Some(Some(Tokens {
                input: 1000,
                ..Tokens::default()
            })),
            price: Some(Price {
                input: 1.0,
                output: 10.0,
                ..Price::default()
            }),
            ..RoundSpend::default()
        };
        let summary = RoundSummary {
            tokens: Tokens {
                input: 3000,
                output: 100,
                ..Tokens::default()
            },
            session_tokens: Some(Tokens {
                input: 3000,
                output: 100,
                ..Tokens::default()
            }),
            ..RoundSummary::default()
        };
        let settled = spend.settle(&*store, &summary);
        assert_eq!(settled.tokens.input, 2000);
        let expected = 2000.0 / 1_000_000.0 + 100.0 * 10.0 / 1_000_000.0;
        assert!((settled.cost_usd.unwrap() - expected).abs() < 1e-12);
        assert_eq!(spent_by(&settled).tokens, 2100);
    }
}

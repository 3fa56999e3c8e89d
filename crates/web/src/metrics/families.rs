//! ganger's metric families (docs/operations.md lists them), written from one reading of the
//! store ([`FleetMetrics`]) and the store answer times this process measured.

use super::text::{Exposition, Histogram, Kind};
use ganger_engine::metrics::{FleetMetrics, ROUND_SECONDS_BOUNDS};
use ganger_events::RoundStatus;
use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Duration;

/// The bounds of the store answer time histogram, in seconds.
const PING_BOUNDS: &[f64] = &[0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0, 5.0];

/// The store's answer times this process measured (at each scrape and health check).
#[derive(Debug, Default)]
pub struct Pings {
    seen: Mutex<PingCounts>,
}

#[derive(Debug, Default, Clone)]
struct PingCounts {
    within: [u64; PING_BOUNDS.len()],
    sum: f64,
    count: u64,
    /// Checks that failed (the store did not answer, or answered an error).
    failed: u64,
}

impl Pings {
    pub fn answered(&self, took: Duration) {
        let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        let seconds = took.as_secs_f64();
        for (at, bound) in PING_BOUNDS.iter().enumerate() {
            if seconds <= *bound {
                seen.within[at] += 1;
            }
        }
        seen.sum += seconds;
        seen.count += 1;
    }

    pub fn failed(&self) {
        self.seen.lock().unwrap_or_else(|e| e.into_inner()).failed += 1;
    }

    fn counts(&self) -> PingCounts {
        self.seen.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

/// The whole exposition: the store's reading when it answered (`Err`: why it did not), and
/// this process's answer times.
pub fn write(reading: &Result<FleetMetrics, String>, pings: &Pings) -> String {
    let mut out = Exposition::default();
    out.family(
        "ganger_store_up",
        Kind::Gauge,
        "Whether the store answered this scrape (1) or not (0).",
    );
    out.sample("ganger_store_up", &[], f64::from(u8::from(reading.is_ok())));
    write_pings(&mut out, pings);
    if let Ok(metrics) = reading {
        write_queue_and_rounds(&mut out, metrics);
        write_warm_and_claim(&mut out, metrics);
    }
    out.into_text()
}

fn write_pings(out: &mut Exposition, pings: &Pings) {
    let counts = pings.counts();
    out.family(
        "ganger_store_ping_seconds",
        Kind::Histogram,
        "How long the store took to answer a ping (one per scrape and health check).",
    );
    let histogram = Histogram {
        buckets: PING_BOUNDS.iter().copied().zip(counts.within).collect(),
        sum: counts.sum,
        count: counts.count,
    };
    out.histogram("ganger_store_ping_seconds", &[], &histogram);
    out.family(
        "ganger_store_ping_failures_total",
        Kind::Counter,
        "Pings of the store that failed or did not answer in time.",
    );
    out.sample(
        "ganger_store_ping_failures_total",
        &[],
        counts.failed as f64,
    );
}

fn write_queue_and_rounds(out: &mut Exposition, metrics: &FleetMetrics) {
    out.family(
        "ganger_queue_items",
        Kind::Gauge,
        "Queue items by state (queued, delivering, delivered, ended, refused, stale).",
    );
    for (state, n) in &metrics.queue {
        out.sample(
            "ganger_queue_items",
            &[("state", state.as_str())],
            *n as f64,
        );
    }
    out.family(
        "ganger_rounds_running",
        Kind::Gauge,
        "Rounds running now, by their task's agent.",
    );
    for tally in metrics.rounds.iter().filter(|t| is_running(t.status)) {
        let labels = [("agent", tally.agent.as_str())];
        out.sample("ganger_rounds_running", &labels, tally.rounds as f64);
    }
    out.family(
        "ganger_rounds_finished_total",
        Kind::Counter,
        "Rounds that have ended, by their task's agent and how they ended.",
    );
    for tally in metrics.rounds.iter().filter(|t| !is_running(t.status)) {
        let labels = [
            ("agent", tally.agent.as_str()),
            ("status", tally.status.as_str()),
        ];
        out.sample("ganger_rounds_finished_total", &labels, tally.rounds as f64);
    }
    out.family(
        "ganger_round_duration_seconds",
        Kind::Histogram,
        "How long ended rounds took, from start to end, by their task's agent.",
    );
    let mut by_agent: BTreeMap<&str, Histogram> = BTreeMap::new();
    for tally in metrics.rounds.iter().filter(|t| t.ended > 0) {
        let histogram = by_agent.entry(&tally.agent).or_insert_with(|| Histogram {
            buckets: ROUND_SECONDS_BOUNDS
                .iter()
                .map(|s| (*s as f64, 0))
                .collect(),
            sum: 0.0,
            count: 0,
        });
        for ((_, within), n) in histogram.buckets.iter_mut().zip(&tally.within) {
            *within += n;
        }
        histogram.sum += tally.duration_ms as f64 / 1000.0;
        histogram.count += tally.ended;
    }
    for (agent, histogram) in &by_agent {
        out.histogram(
            "ganger_round_duration_seconds",
            &[("agent", agent)],
            histogram,
        );
    }
}

fn is_running(status: RoundStatus) -> bool {
    status == RoundStatus::Running
}

fn write_warm_and_claim(out: &mut Exposition, metrics: &FleetMetrics) {
    let mut warm: BTreeMap<&str, (u64, u64)> = BTreeMap::new();
    for agent in &metrics.warm {
        let entry = warm.entry(&agent.agent).or_default();
        entry.0 += 1;
        entry.1 += agent.memory_bytes;
    }
    out.family(
        "ganger_warm_agents",
        Kind::Gauge,
        "Agents kept warm for their task's next round, by agent.",
    );
    for (agent, (n, _)) in &warm {
        out.sample("ganger_warm_agents", &[("agent", agent)], *n as f64);
    }
    out.family(
        "ganger_warm_agent_memory_bytes",
        Kind::Gauge,
        "Resident memory of the warm agents' processes on this machine, by agent.",
    );
    for (agent, (_, bytes)) in &warm {
        out.sample(
            "ganger_warm_agent_memory_bytes",
            &[("agent", agent)],
            *bytes as f64,
        );
    }
    out.family(
        "ganger_pushes_pending",
        Kind::Gauge,
        "Finished rounds whose work waits to be pushed to their fleet's remote.",
    );
    out.sample("ganger_pushes_pending", &[], metrics.pushes_pending as f64);
    let Some(claim) = &metrics.claim else {
        return;
    };
    out.family(
        "ganger_claim_held",
        Kind::Gauge,
        "Whether the store holds this process's claim (a worker's, or serve's scheduler's; a \
         lease on PostgreSQL) alive.",
    );
    out.sample("ganger_claim_held", &[], f64::from(u8::from(claim.held)));
    out.family(
        "ganger_claim_items_held",
        Kind::Gauge,
        "Queue items this process is delivering or has delivered under its claim.",
    );
    out.sample("ganger_claim_items_held", &[], claim.items as f64);
}

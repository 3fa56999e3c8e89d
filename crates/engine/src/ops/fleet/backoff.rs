//! Rate limits: a round that ended on an HTTP 429 or a usage limit pauses new rounds on its
//! model for `base * 2^(n-1)` plus up to a quarter of that as jitter (n: rate limits in a row,
//! capped at ten minutes), and its task goes back to the queue as a "continue" in its session.
//! The first round on the model that ends well clears the pause.

use ganger_events::RoundStatus;
use ganger_store::{Backend, Round, RoundStream, StreamKind, Task};
use std::time::Duration;

/// The longest pause.
pub const MAX_PAUSE: Duration = Duration::from_secs(600);

/// What a rate limit looks like in a round's reason, errors, answer or stderr.
const NEEDLES: [&str; 6] = [
    "429",
    "rate limit",
    "rate_limit",
    "too many requests",
    "usage limit",
    "quota exceeded",
];

/// The line that says the round hit a rate limit, if it did.
pub fn rate_limited(store: &dyn Backend, task: &Task, round: &Round) -> Option<String> {
    if round.status != RoundStatus::Failed || round.failed_checks().next().is_some() {
        return None;
    }
    if let Some(line) = round.summary.gateway.as_ref().and_then(gateway_rate_limit) {
        return Some(line);
    }
    let mut texts: Vec<String> = Vec::new();
    texts.extend(round.reason.clone());
    texts.extend(round.summary.errors.iter().cloned());
    texts.extend(round.summary.answer.clone());
    let stderr = RoundStream::of(task, round, StreamKind::Stderr);
    if let Ok(Some(mut reader)) = store.read_stream(&stderr, 0)
        && let Ok(text) = {
            let mut text = String::new();
            std::io::Read::read_to_string(&mut reader, &mut text).map(|_| text)
        }
    {
        let tail: Vec<&str> = text.lines().rev().take(20).collect();
        texts.extend(tail.into_iter().rev().map(str::to_owned));
    }
    texts
        .into_iter()
        .flat_map(|t| t.lines().map(str::to_owned).collect::<Vec<_>>())
        .find(|line| {
            let lower = line.to_ascii_lowercase();
            NEEDLES.iter().any(|needle| lower.contains(needle))
        })
}

/// What the model gateway saw of rate limits: the upstream's own 429s, whatever the agent made
/// of them.
pub fn gateway_rate_limit(tally: &ganger_events::GatewayTally) -> Option<String> {
    if tally.rate_limited == 0 {
        return None;
    }
    let wait = tally
        .retry_after_ms
        .map(|ms| format!(", asking to wait {:.1} s", ms as f64 / 1000.0))
        .unwrap_or_default();
    Some(format!(
        "the model answered 429 (rate limited) {} times at the gateway{wait}",
        tally.rate_limited
    ))
}

/// The pause after a rate limit: [`pause_for`], but never shorter than the wait the upstream
/// asked for (its `retry-after`, as the gateway saw it), within [`MAX_PAUSE`].
pub fn pause_after(base: Duration, strikes: u32, jitter: f64, asked: Option<Duration>) -> Duration {
    let pause = pause_for(base, strikes, jitter);
    match asked {
        Some(asked) => pause.max(asked.min(MAX_PAUSE)),
        None => pause,
    }
}

/// The pause after the `strikes`th rate limit in a row; `jitter` in [0, 1).
pub fn pause_for(base: Duration, strikes: u32, jitter: f64) -> Duration {
    let doubled = base.saturating_mul(1u32 << strikes.saturating_sub(1).min(20));
    let capped = doubled.min(MAX_PAUSE);
    capped + capped.mul_f64(0.25 * jitter.clamp(0.0, 1.0))
}

/// A number in [0, 1) from the clock and the process: jitter need not be good randomness,
/// only different between schedulers and pauses.
pub fn jitter() -> f64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let mixed = (u64::from(nanos) ^ (u64::from(std::process::id()) << 17))
        .wrapping_mul(0x9e37_79b9_7f4a_7c15);
    (mixed >> 11) as f64 / (1u64 << 53) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_upstreams_retry_after_is_the_pauses_floor_within_the_cap() {
        let base = Duration::from_secs(2);
        let secs = Duration::from_secs;
        assert_eq!(pause_after(base, 1, 0.0, None), secs(2));
        assert_eq!(pause_after(base, 1, 0.0, Some(secs(30))), secs(30));
        assert_eq!(pause_after(base, 3, 0.0, Some(secs(1))), secs(8));
        assert_eq!(pause_after(base, 1, 0.0, Some(secs(3600))), MAX_PAUSE);
        let mut tally = ganger_events::GatewayTally::default();
        assert_eq!(gateway_rate_limit(&tally), None);
        tally.rate_limited = 2;
        tally.retry_after_ms = Some(3000);
        assert_eq!(
            gateway_rate_limit(&tally).as_deref(),
            Some(
                "the model answered 429 (rate limited) 2 times at the gateway, asking to wait 3.0 s"
            )
        );
    }

    #[test]
    fn the_pause_doubles_is_capped_and_jitter_adds_at_most_a_quarter() {
        let base = Duration::from_secs(2);
        assert_eq!(pause_for(base, 1, 0.0), Duration::from_secs(2));
        assert_eq!(pause_for(base, 3, 0.0), Duration::from_secs(8));
        assert_eq!(pause_for(base, 30, 0.0), MAX_PAUSE);
        assert_eq!(pause_for(base, 2, 1.0), Duration::from_secs(5));
        let j = jitter();
        assert!((0.0..1.0).contains(&j));
    }
}

//! PostgreSQL's liveness: a claim is a lease (`lease.rs`) recorded under its name, so the key
//! of a claim is its name, the same from every machine. Alive means a row whose lease has not
//! run out by the database's clock; waiters sleep on the pool's listening connection (woken by
//! a release's NOTIFY) and look again at least every [`POLL_EVERY`], and as soon as the lease
//! they wait on would run out.

use super::PgStore;
use super::conn::Query;
use super::lease::{LeaseHold, lease_ms, renew};
use super::pool::Pool;
use crate::error::StoreError;
use crate::liveness::{Claim, ClaimKey, HandedClaim, Liveness};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The longest a waiter sleeps before it looks again, notification or not.
pub(crate) const POLL_EVERY: Duration = Duration::from_secs(1);

/// How long the lease `name` has left (by the database's clock); `None` when it is dead.
pub(crate) fn time_left(conn: &mut impl Query, name: &str) -> Result<Option<Duration>, StoreError> {
    let found = conn.query_opt(
        "SELECT (EXTRACT(EPOCH FROM (expires_at - now())) * 1000)::bigint FROM leases \
         WHERE name = $1 AND expires_at > now()",
        &[&name],
    )?;
    let Some(row) = found else {
        return Ok(None);
    };
    let ms: i64 = row.try_get(0)?;
    Ok(Some(Duration::from_millis(u64::try_from(ms).unwrap_or(0))))
}

/// Waits until the claim `name` is dead, at most `timeout`; true when it is. Holds no
/// connection between looks: it sleeps on the pool's listening connection (`listen.rs`).
pub(crate) fn wait_dead(
    pool: &Arc<Pool>,
    name: &str,
    timeout: Option<Duration>,
) -> Result<bool, StoreError> {
    let deadline = timeout.map(|t| Instant::now() + t);
    // Subscribed before the first look: an end between the look and the wait is not missed.
    let subscription = pool.hub()?.subscribe(vec![name.to_owned()]);
    loop {
        let Some(left) = time_left(&mut *pool.get()?, name)? else {
            return Ok(true);
        };
        let mut nap = POLL_EVERY.min(left + Duration::from_millis(20));
        if let Some(deadline) = deadline {
            let remaining = deadline.saturating_duration_since(Instant::now());
            if remaining.is_zero() {
                return Ok(false);
            }
            nap = nap.min(remaining);
        }
        subscription.wait(nap);
    }
}

fn spawn_watch(
    pool: Arc<Pool>,
    name: String,
    then: Box<dyn FnOnce() + Send>,
) -> std::io::Result<()> {
    std::thread::Builder::new()
        .name("claim-watch".into())
        .stack_size(super::THREAD_STACK)
        .spawn(move || {
            loop {
                if let Ok(true) = wait_dead(&pool, &name, None) {
                    then();
                    return;
                }
                // The database went away for now: look again in a moment.
                std::thread::sleep(POLL_EVERY);
            }
        })
        .map(drop)
}

impl Liveness for PgStore {
    fn claim(&self, name: &str) -> Result<Claim, StoreError> {
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
        let holder = format!("{}:{}", host.trim(), std::process::id());
        let taken = self.conn()?.query_opt(
            "INSERT INTO leases (name, fence, expires_at, holder) \
             VALUES ($1, nextval('lease_fence'), now() + $2::bigint * interval '1 millisecond', $3) \
             ON CONFLICT (name) DO UPDATE SET fence = EXCLUDED.fence, \
                 expires_at = EXCLUDED.expires_at, holder = EXCLUDED.holder \
             WHERE leases.expires_at <= now() \
             RETURNING fence",
            &[&name, &lease_ms(), &holder],
        )?;
        let Some(row) = taken else {
            return Err(StoreError::ClaimHeld {
                name: name.to_owned(),
            });
        };
        let fence: i64 = row.try_get(0)?;
        let hold = LeaseHold::start(Arc::clone(&self.pool), name.to_owned(), fence)?;
        Ok(Claim::new(self.claim_key(name), Box::new(hold)))
    }

    fn claim_key(&self, name: &str) -> ClaimKey {
        ClaimKey::new(name)
    }

    fn inherited_claim(&self, handed: HandedClaim) -> Result<Claim, StoreError> {
        let HandedClaim::Lease { name, fence } = handed else {
            return Err(handed.foreign("PostgreSQL"));
        };
        // Renewed at once: a lease that ran out (or went to another holder) in the handover
        // is not this process's to carry.
        if !renew(&self.pool, &name, fence)? {
            return Err(StoreError::ClaimHeld { name });
        }
        let hold = LeaseHold::start(Arc::clone(&self.pool), name.clone(), fence)?;
        Ok(Claim::new(self.claim_key(&name), Box::new(hold)))
    }

    fn is_alive(&self, key: &ClaimKey) -> Result<bool, StoreError> {
        Ok(self.twice(|conn| time_left(conn, key.as_str()))?.is_some())
    }

    fn wait_for_end(&self, key: &ClaimKey, timeout: Option<Duration>) -> Result<bool, StoreError> {
        wait_dead(&self.pool, key.as_str(), timeout)
    }

    fn when_ended(&self, key: &ClaimKey, then: Box<dyn FnOnce() + Send>) -> Result<(), StoreError> {
        // A database that cannot be reached now is said at once.
        drop(self.conn()?);
        drop(self.pool.hub()?);
        spawn_watch(Arc::clone(&self.pool), key.as_str().to_owned(), then).map_err(|source| {
            StoreError::Io {
                path: "claim-watch".into(),
                source,
            }
        })
    }

    fn forget_claim(&self, key: &ClaimKey) {
        if let Ok(mut conn) = self.conn() {
            let _ = conn.execute(
                "DELETE FROM leases WHERE name = $1 AND expires_at <= now()",
                &[&key.as_str()],
            );
        }
    }
}

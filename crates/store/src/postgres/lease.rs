//! A claim held as a lease: a row of `leases` with the claim's fence number, its expiry set
//! from the database's clock. A heartbeat thread renews it every [`RENEW_EVERY`] while the
//! [`LeaseHold`] lives; a renewal only extends a lease that has not run out and still has
//! this holder's fence, so a holder that was too slow (a partition, a stopped process) finds
//! it has lost the claim instead of taking it back from whoever saw it dead.
//!
//! Releasing the hold, or dropping it (a holder unwinding as it dies), deletes the row and
//! notifies [`CLAIM_END`], so waiters wake at once, as SQLite's lock goes with its holder. A
//! holder killed outright cannot say so: its heartbeat stops with it and the lease runs out
//! within [`LEASE`]. A hold handed to a process this one starts (its command line names the
//! lease and the fence) is only let go when dropped: that process renews the same lease from
//! then on.

use super::conn::Query;
use super::listen::CLAIM_END;
use super::pool::Pool;
use crate::error::StoreError;
use crate::liveness::{ClaimHold, HandedClaim, Handover};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::time::Duration;

/// How long a lease runs without a renewal: a holder that died is seen dead within this.
pub(crate) const LEASE: Duration = Duration::from_secs(10);
/// How often a held lease is renewed: several renewals may fail before it runs out.
pub(crate) const RENEW_EVERY: Duration = Duration::from_secs(2);

/// The lease's length as PostgreSQL's interval, in milliseconds.
pub(crate) fn lease_ms() -> i64 {
    i64::try_from(LEASE.as_millis()).unwrap_or(i64::MAX)
}

/// A held lease, renewed by a heartbeat thread until dropped or released.
#[derive(Debug)]
pub(crate) struct LeaseHold {
    pool: Arc<Pool>,
    name: String,
    fence: i64,
    /// Dropped to stop the heartbeat.
    stop: Option<Sender<()>>,
    /// Handed to a process this one started: dropping the hold does not end the lease.
    handed_over: AtomicBool,
    /// Ended already (released): nothing is left to do when dropped.
    ended: bool,
    /// Set by the heartbeat when a renewal found the lease no longer this holder's.
    lost: Arc<AtomicBool>,
}

impl LeaseHold {
    /// Starts renewing the lease `name` held with `fence`.
    pub(crate) fn start(
        pool: Arc<Pool>,
        name: String,
        fence: i64,
    ) -> Result<LeaseHold, StoreError> {
        let (stop, stopped) = mpsc::channel::<()>();
        let beat_pool = Arc::clone(&pool);
        let beat_name = name.clone();
        let lost = Arc::new(AtomicBool::new(false));
        let beat_lost = Arc::clone(&lost);
        std::thread::Builder::new()
            .name("lease-heartbeat".into())
            .stack_size(super::THREAD_STACK)
            .spawn(move || {
                loop {
                    match stopped.recv_timeout(RENEW_EVERY) {
                        Err(RecvTimeoutError::Timeout) => {}
                        // Dropped or released: the heartbeat ends.
                        Ok(()) | Err(RecvTimeoutError::Disconnected) => return,
                    }
                    match renew(&beat_pool, &beat_name, fence) {
                        Ok(true) => {}
                        // Lost: another holder has the name, or it ran out. Nothing to renew;
                        // the fence stays with the pool, so that the database refuses this
                        // process's writes of the work (`fence.rs`).
                        Ok(false) => {
                            beat_lost.store(true, Ordering::SeqCst);
                            return;
                        }
                        // The database is unreachable for now: try again at the next beat.
                        Err(_) => {}
                    }
                }
            })
            .map_err(|source| StoreError::Io {
                path: "lease-heartbeat".into(),
                source,
            })?;
        pool.fences.hold(&name, fence);
        Ok(LeaseHold {
            pool,
            name,
            fence,
            stop: Some(stop),
            handed_over: AtomicBool::new(false),
            ended: false,
            lost,
        })
    }

    /// Stops the heartbeat, deletes the lease and notifies its end. Best effort: an end that
    /// cannot reach the database leaves the lease to run out.
    fn end(&mut self) {
        self.stop = None;
        self.ended = true;
        self.pool.fences.let_go(&self.name, self.fence);
        let Ok(mut conn) = self.pool.get() else {
            return;
        };
        let _ = conn.execute(
            "WITH ended AS (DELETE FROM leases WHERE name = $1 AND fence = $2 RETURNING name) \
             SELECT pg_notify($3, name) FROM ended",
            &[&self.name, &self.fence, &CLAIM_END],
        );
    }
}

/// Extends the lease `name` held with `fence`; false when it is no longer this holder's (or
/// ran out before it could be renewed).
pub(crate) fn renew(pool: &Arc<Pool>, name: &str, fence: i64) -> Result<bool, StoreError> {
    // Sent again on a new connection when the first was cut by a restart: extending the
    // same lease twice is extending it once.
    let changed = pool.write_twice_if_cut(|conn, _| {
        conn.execute(
            "UPDATE leases SET expires_at = now() + $3::bigint * interval '1 millisecond' \
             WHERE name = $1 AND fence = $2 AND expires_at > now()",
            &[&name, &fence, &lease_ms()],
        )
    })?;
    Ok(changed > 0)
}

impl ClaimHold for LeaseHold {
    fn handover(&self) -> Handover<'_> {
        self.handed_over.store(true, Ordering::SeqCst);
        // The process it goes to writes the work from now on, under the same fence.
        self.pool.fences.let_go(&self.name, self.fence);
        Handover {
            inherit: None,
            claim: HandedClaim::Lease {
                name: self.name.clone(),
                fence: self.fence,
            },
        }
    }

    fn release(mut self: Box<Self>) {
        self.end();
    }

    fn lost(&self) -> bool {
        self.lost.load(Ordering::SeqCst)
    }
}

impl Drop for LeaseHold {
    fn drop(&mut self) {
        self.stop = None;
        self.pool.fences.let_go(&self.name, self.fence);
        if !self.ended && !self.handed_over.load(Ordering::SeqCst) {
            self.end();
        }
    }
}

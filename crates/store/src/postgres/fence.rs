//! Fencing: a process that lost a round's claim writes nothing more of that round. Each pool
//! keeps the leases its process holds (name and fence); a write of a round (its host, its
//! agent, its progress, its end, its stream) carries them, and the database refuses the write
//! when one of them names the round's claim and no longer holds it: its lease ran out, or was
//! taken again under a newer fence. A process that never held the round's claim (an observer
//! settling a dead round) is not held back: the round's `status = 'running'` guard decides.

use std::sync::Mutex;

/// The leases this process holds, by name, with their fences.
#[derive(Debug, Default)]
pub(crate) struct Fences {
    held: Mutex<Vec<(String, i64)>>,
}

impl Fences {
    /// This process holds `name` with `fence` from now on.
    pub(crate) fn hold(&self, name: &str, fence: i64) {
        self.lock().push((name.to_owned(), fence));
    }

    /// This process no longer holds `name` with `fence` (released, dropped, handed over).
    pub(crate) fn let_go(&self, name: &str, fence: i64) {
        self.lock()
            .retain(|(held, held_fence)| !(held == name && *held_fence == fence));
    }

    /// The names and fences held, as two parallel arrays for [`still_held`].
    pub(crate) fn arrays(&self) -> (Vec<String>, Vec<i64>) {
        self.lock().iter().cloned().unzip()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<(String, i64)>> {
        self.held.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The SQL condition that none of the held leases (`$names`, `$fences`: the parameters of
/// [`Fences::arrays`]) naming `claim` (a column holding the round's claim name) was lost.
pub(crate) fn still_held(claim: &str, names: &str, fences: &str) -> String {
    format!(
        "NOT EXISTS (SELECT 1 FROM unnest({names}::text[], {fences}::bigint[]) AS held(name, fence) \
         WHERE held.name = {claim} AND NOT EXISTS (SELECT 1 FROM leases l \
         WHERE l.name = held.name AND l.fence = held.fence AND l.expires_at > now()))"
    )
}

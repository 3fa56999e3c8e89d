//! The store's errors. The ones that callers act on (a taken slug, a busy task, work queued
//! already, a slug of another fleet) are their own variants so that the CLI can say exactly
//! what is wrong.

/// A failure of the store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// A task with this slug exists already.
    #[error("task {0} exists already")]
    SlugTaken(String),
    /// An open item asks for this already: a start of the slug, or a fleet's item of it.
    #[error("task {0} is queued already")]
    AlreadyQueued(String),
    /// A fleet names a slug that another fleet's task (or a task of no fleet) has.
    #[error("task {slug} belongs to {holder}; fleet {fleet} cannot run a task of that slug", holder = match holder { Some(other) => format!("fleet {other}"), None => "no fleet".to_owned() })]
    FleetConflict {
        slug: String,
        fleet: String,
        /// The fleet that holds it; `None`: a task or item of no fleet.
        holder: Option<String>,
    },
    /// The task has a running round; a second one may not start.
    #[error("round {number} of {slug} is still running{host}", host = host_pid.map(|p| format!(" (host pid {p})")).unwrap_or_default())]
    Busy {
        slug: String,
        number: u32,
        host_pid: Option<i32>,
    },
    /// Another start of this slug is recorded as under way (its command holds `claim`
    /// while it lives).
    #[error("task {slug} is being started")]
    StartPending {
        slug: String,
        claim: crate::liveness::ClaimKey,
    },
    /// A clean of the task is recorded as under way (its command holds `claim` while it
    /// lives): no round may begin.
    #[error("task {slug} is being cleaned")]
    BeingCleaned {
        slug: String,
        claim: crate::liveness::ClaimKey,
    },
    /// A session adopted by a task already.
    #[error("session {session} is task {slug}'s already")]
    SessionTaken { session: String, slug: String },
    /// The round was sent under a generation of the task that an ownership change has ended.
    #[error("the round for {slug} was sent under generation {sent}, but the task's ownership changed since (generation {now}, owner {owner})", owner = if owner.is_empty() { "nobody" } else { owner.as_str() })]
    Stale {
        slug: String,
        sent: i64,
        now: i64,
        owner: String,
    },
    /// The round's commander neither owns the task nor is allowed by its owner.
    #[error("{commander} may not send rounds to {slug}: it is owned by {owner}", owner = if owner.is_empty() { "nobody" } else { owner.as_str() })]
    NotAllowed {
        slug: String,
        commander: String,
        owner: String,
    },
    /// A live holder has the claim already (another fix loop of the task, another person
    /// attached to it).
    #[error("{name} is held by another ganger process")]
    ClaimHeld { name: String },
    /// This process's claim of a round ran out before the round was recorded (it was cut
    /// off from the store past its lease): others may have settled what it was doing.
    #[error(
        "the claim {name} ran out before the round was recorded (cut off from the store for \
         longer than its lease)"
    )]
    ClaimLost { name: String },
    /// The database was written by a newer ganger.
    #[error(
        "the state database has schema {found}, newer than this ganger's {known}; use a newer ganger"
    )]
    TooNew { found: i64, known: i64 },
    /// A stored value could not be read back.
    #[error("unreadable state: {0}")]
    Corrupt(String),
    /// The store was held by another writer past the wait: nothing was changed, and trying
    /// again later can succeed.
    #[error("state database error: {source}")]
    Contended {
        #[source]
        source: BackendError,
    },
    /// The store's data is damaged (or is not a store at all).
    #[error("state database error: {source}")]
    Damaged {
        #[source]
        source: BackendError,
    },
    /// The backend's server could not be reached, or the connection went away under a
    /// statement (a restart, a link down): trying again a little later can succeed. A step cut
    /// before its answer came may have been written all the same (a commit whose answer was
    /// lost), so only a step that may be sent twice is sent again.
    #[error("state database unreachable: {source}")]
    Unreachable {
        #[source]
        source: BackendError,
    },
    /// Any other failure of the backend (a disk that is full or read-only).
    #[error("state database error: {source}")]
    Backend {
        #[source]
        source: BackendError,
    },
    /// A file of the state directory failed.
    #[error("failed to access {path}: {source}")]
    Io {
        path: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// The backend's own error, kept as the source of a [`StoreError`] without naming its type:
/// nothing above the backend depends on which database it is.
pub type BackendError = Box<dyn std::error::Error + Send + Sync + 'static>;

impl StoreError {
    /// Whether the store was busy (another writer held it past the wait): trying again later
    /// can succeed, and nothing was changed.
    pub fn is_busy(&self) -> bool {
        matches!(self, StoreError::Contended { .. })
    }

    /// Whether the backend could not be reached ([`StoreError::Unreachable`]): trying again a
    /// little later can succeed.
    pub fn is_unreachable(&self) -> bool {
        matches!(self, StoreError::Unreachable { .. })
    }

    /// A failure of the backend that is none of the store's own refusals.
    pub fn backend(source: impl Into<BackendError>) -> StoreError {
        StoreError::Backend {
            source: source.into(),
        }
    }
}

-- ganger state, schema 1: tasks, their rounds, and the journal of what happened.
-- Times are Unix milliseconds. JSON columns hold serde-encoded values documented in the
-- store crate's record types.

CREATE TABLE tasks (
    id             INTEGER PRIMARY KEY,
    slug           TEXT NOT NULL UNIQUE,
    agent          TEXT NOT NULL,
    model          TEXT,
    base           TEXT NOT NULL,
    base_commit    TEXT,
    branch         TEXT NOT NULL,
    worktree       TEXT NOT NULL,
    worktree_made  INTEGER NOT NULL,
    session        TEXT,
    owner          TEXT NOT NULL,
    generation     INTEGER NOT NULL DEFAULT 1,
    keys           TEXT NOT NULL DEFAULT '{}',
    timeout_ms     INTEGER,
    stall_ms       INTEGER,
    created_at     INTEGER NOT NULL,
    -- Kept in step with the rounds by every change, so that listing many tasks reads one table.
    rounds         INTEGER NOT NULL DEFAULT 0,
    last_status    TEXT,
    cost_usd       REAL NOT NULL DEFAULT 0
);

CREATE TABLE rounds (
    id               INTEGER PRIMARY KEY,
    task_id          INTEGER NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
    number           INTEGER NOT NULL,
    kind             TEXT NOT NULL,
    status           TEXT NOT NULL,
    reason           TEXT,
    model            TEXT,
    session_before   TEXT,
    session          TEXT,
    commander        TEXT NOT NULL,
    token            TEXT NOT NULL,
    lock_path        TEXT NOT NULL,
    host_pid         INTEGER,
    host_start       INTEGER,
    agent_pid        INTEGER,
    agent_start      INTEGER,
    cgroup           TEXT,
    cancel_requested INTEGER NOT NULL DEFAULT 0,
    started_at       INTEGER NOT NULL,
    progress_at      INTEGER,
    ended_at         INTEGER,
    exit_code        INTEGER,
    exit_signal      INTEGER,
    summary          TEXT NOT NULL DEFAULT '{}',
    snapshot_before  TEXT,
    snapshot_after   TEXT,
    changed          TEXT NOT NULL DEFAULT '[]',
    worktree_changes TEXT NOT NULL DEFAULT '[]',
    UNIQUE (task_id, number)
);

-- At most one running round per task, whoever tries to start a second and however they race.
CREATE UNIQUE INDEX rounds_one_running ON rounds(task_id) WHERE status = 'running';

CREATE TABLE journal (
    id         INTEGER PRIMARY KEY,
    at         INTEGER NOT NULL,
    task_id    INTEGER REFERENCES tasks(id) ON DELETE CASCADE,
    round      INTEGER,
    kind       TEXT NOT NULL,
    commander  TEXT,
    detail     TEXT NOT NULL DEFAULT '{}'
);

CREATE INDEX journal_task ON journal(task_id, id);

-- ganger state on PostgreSQL, schema 1: what SQLite's migrations 0001..0013 make, in one go.
-- Times are Unix milliseconds (BIGINT), as in SQLite; counts and numbers are BIGINT too, so
-- that the Rust side reads every integer as i64. JSON columns are TEXT holding the store's
-- serde encoding, byte for byte as SQLite keeps it; the few queries that look inside cast to
-- jsonb. Claims are recorded by key in the `lock_path` columns (the name is SQLite's; here
-- the key is the lease's name, see 0002).

CREATE TABLE tasks (
    id             BIGSERIAL PRIMARY KEY,
    slug           TEXT NOT NULL UNIQUE,
    agent          TEXT NOT NULL,
    model          TEXT,
    base           TEXT NOT NULL,
    base_commit    TEXT,
    branch         TEXT NOT NULL,
    worktree       TEXT NOT NULL,
    worktree_made  BOOLEAN NOT NULL,
    session        TEXT,
    owner          TEXT NOT NULL,
    generation     BIGINT NOT NULL DEFAULT 1,
    keys           TEXT NOT NULL DEFAULT '{}',
    timeout_ms     BIGINT,
    stall_ms       BIGINT,
    created_at     BIGINT NOT NULL,
    -- Kept in step with the rounds by every change, so that listing many tasks reads one table.
    rounds         BIGINT NOT NULL DEFAULT 0,
    last_status    TEXT,
    cost_usd       DOUBLE PRECISION NOT NULL DEFAULT 0,
    permission     TEXT NOT NULL DEFAULT 'write',
    sandbox        TEXT NOT NULL DEFAULT 'local',
    network        TEXT NOT NULL DEFAULT 'shared',
    rw             TEXT NOT NULL DEFAULT '[]',
    cleaned_at     BIGINT,
    resume_note    TEXT,
    fork_from      TEXT,
    parent         BIGINT REFERENCES tasks(id) ON DELETE CASCADE,
    role           TEXT,
    inbound        TEXT NOT NULL DEFAULT 'accept',
    allowed        TEXT NOT NULL DEFAULT '[]',
    warm           BOOLEAN
);
CREATE INDEX tasks_parent ON tasks(parent);

CREATE TABLE rounds (
    id               BIGSERIAL PRIMARY KEY,
    task_id          BIGINT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
    number           BIGINT NOT NULL,
    kind             TEXT NOT NULL,
    status           TEXT NOT NULL,
    reason           TEXT,
    model            TEXT,
    session_before   TEXT,
    session          TEXT,
    commander        TEXT NOT NULL,
    token            TEXT NOT NULL,
    lock_path        TEXT NOT NULL,
    host_pid         BIGINT,
    host_start       BIGINT,
    agent_pid        BIGINT,
    agent_start      BIGINT,
    cgroup           TEXT,
    cancel_requested BOOLEAN NOT NULL DEFAULT FALSE,
    started_at       BIGINT NOT NULL,
    progress_at      BIGINT,
    ended_at         BIGINT,
    exit_code        BIGINT,
    exit_signal      BIGINT,
    summary          TEXT NOT NULL DEFAULT '{}',
    snapshot_before  TEXT,
    snapshot_after   TEXT,
    changed          TEXT NOT NULL DEFAULT '[]',
    worktree_changes TEXT NOT NULL DEFAULT '[]',
    checks           TEXT NOT NULL DEFAULT '[]',
    rewound          BOOLEAN NOT NULL DEFAULT FALSE,
    fork_from        TEXT,
    UNIQUE (task_id, number)
);

-- At most one running round per task, whoever tries to start a second and however they race.
CREATE UNIQUE INDEX rounds_one_running ON rounds(task_id) WHERE status = 'running';

CREATE TABLE journal (
    id         BIGSERIAL PRIMARY KEY,
    at         BIGINT NOT NULL,
    task_id    BIGINT REFERENCES tasks(id) ON DELETE CASCADE,
    round      BIGINT,
    kind       TEXT NOT NULL,
    commander  TEXT,
    detail     TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX journal_task ON journal(task_id, id);

CREATE TABLE pipelines (
    task_id       BIGINT PRIMARY KEY REFERENCES tasks(id) ON DELETE CASCADE,
    stage         TEXT NOT NULL,
    reason        TEXT,
    brief         TEXT NOT NULL,
    plan_version  BIGINT NOT NULL DEFAULT 0,
    steps_total   BIGINT NOT NULL DEFAULT 0,
    steps_done    BIGINT NOT NULL DEFAULT 0,
    review_round  BIGINT NOT NULL DEFAULT 0,
    verdicts      TEXT NOT NULL DEFAULT '[]',
    updated_at    BIGINT NOT NULL
);

CREATE TABLE queue (
    id          BIGSERIAL PRIMARY KEY,
    slug        TEXT NOT NULL,
    kind        TEXT NOT NULL,
    options     TEXT NOT NULL DEFAULT '{}',
    prompt_file TEXT NOT NULL,
    commander   TEXT NOT NULL,
    generation  BIGINT,
    fleet       TEXT,
    after       TEXT NOT NULL DEFAULT '[]',
    not_before  BIGINT NOT NULL DEFAULT 0,
    state       TEXT NOT NULL DEFAULT 'queued',
    reason      TEXT,
    round       BIGINT,
    claimed_at  BIGINT,
    created_at  BIGINT NOT NULL,
    updated_at  BIGINT NOT NULL
);
CREATE INDEX queue_open ON queue(state, id);
CREATE INDEX queue_fleet ON queue(fleet, id);
CREATE INDEX queue_slug ON queue(slug, state);
-- "Already queued" held by the store: at most one open start per slug, and at most one open
-- item of a slug in fleets (SQLite's migration 0011).
CREATE UNIQUE INDEX queue_one_open_start ON queue(slug)
    WHERE kind = 'start' AND state IN ('queued', 'delivering', 'delivered');
CREATE UNIQUE INDEX queue_one_open_fleet_item ON queue(slug)
    WHERE fleet IS NOT NULL AND state IN ('queued', 'delivering', 'delivered');

CREATE TABLE fleets (
    name       TEXT PRIMARY KEY,
    file       TEXT,
    limits     TEXT NOT NULL DEFAULT '{}',
    created_at BIGINT NOT NULL
);

CREATE TABLE model_pauses (
    model   TEXT PRIMARY KEY,
    until   BIGINT NOT NULL,
    strikes BIGINT NOT NULL,
    reason  TEXT
);

CREATE TABLE task_budgets (
    task_id  BIGINT PRIMARY KEY REFERENCES tasks(id) ON DELETE CASCADE,
    usd      DOUBLE PRECISION,
    tokens   BIGINT
);

CREATE TABLE budgets (
    fleet    TEXT PRIMARY KEY,
    usd      DOUBLE PRECISION,
    tokens   BIGINT
);

CREATE TABLE fleet_tasks (
    task_id  BIGINT PRIMARY KEY REFERENCES tasks(id) ON DELETE CASCADE,
    fleet    TEXT NOT NULL
);
CREATE INDEX fleet_tasks_fleet ON fleet_tasks(fleet);

CREATE TABLE labels (
    task_id  BIGINT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
    key      TEXT NOT NULL,
    value    TEXT NOT NULL,
    PRIMARY KEY (task_id, key)
);
CREATE INDEX labels_key ON labels(key, value);

CREATE TABLE done_lines (
    task_id  BIGINT PRIMARY KEY REFERENCES tasks(id) ON DELETE CASCADE,
    round    BIGINT NOT NULL,
    line     TEXT NOT NULL,
    at       BIGINT NOT NULL
);

CREATE TABLE commanders (
    name            TEXT PRIMARY KEY,
    journal_cursor  BIGINT NOT NULL DEFAULT 0
);

CREATE TABLE starts_pending (
    slug        TEXT PRIMARY KEY,
    worktree    TEXT NOT NULL,
    branch      TEXT NOT NULL,
    base_commit TEXT NOT NULL,
    lock_path   TEXT NOT NULL,
    commander   TEXT NOT NULL,
    started_at  BIGINT NOT NULL
);

CREATE TABLE task_cleaning (
    task_id    BIGINT PRIMARY KEY REFERENCES tasks(id) ON DELETE CASCADE,
    lock_path  TEXT NOT NULL,
    commander  TEXT NOT NULL,
    started_at BIGINT NOT NULL
);

-- Evidence for fleets (issue 6): budgets, labels, DONE lines, and each commander's journal
-- cursor. Kept in tables of their own so that the task and round rows stay as they were.

-- A task's budget (`ganger start --budget-usd/--budget-tokens`); a NULL limit is no limit.
CREATE TABLE task_budgets (
    task_id  INTEGER PRIMARY KEY REFERENCES tasks(id) ON DELETE CASCADE,
    usd      REAL,
    tokens   INTEGER
);

-- A fleet's budget, by the fleet's name, over every task linked to it in fleet_tasks.
CREATE TABLE budgets (
    fleet    TEXT PRIMARY KEY,
    usd      REAL,
    tokens   INTEGER
);

-- Which fleet a task belongs to (set by the scheduler when it makes the task).
CREATE TABLE fleet_tasks (
    task_id  INTEGER PRIMARY KEY REFERENCES tasks(id) ON DELETE CASCADE,
    fleet    TEXT NOT NULL
);
CREATE INDEX fleet_tasks_fleet ON fleet_tasks(fleet);

-- Labels on tasks (`--label KEY=VALUE`), for `ganger status --group-by KEY`.
CREATE TABLE labels (
    task_id  INTEGER NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
    key      TEXT NOT NULL,
    value    TEXT NOT NULL,
    PRIMARY KEY (task_id, key)
);
CREATE INDEX labels_key ON labels(key, value);

-- A task's last `DONE:` line and the round that gave it.
CREATE TABLE done_lines (
    task_id  INTEGER PRIMARY KEY REFERENCES tasks(id) ON DELETE CASCADE,
    round    INTEGER NOT NULL,
    line     TEXT NOT NULL,
    at       INTEGER NOT NULL
);

-- Commanders and how far each has read the journal (`ganger ack N`).
CREATE TABLE commanders (
    name            TEXT PRIMARY KEY,
    journal_cursor  INTEGER NOT NULL DEFAULT 0
);

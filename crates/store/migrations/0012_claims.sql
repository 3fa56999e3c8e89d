-- Work under way that is not a round yet, recorded before anything is made or removed, so
-- that a command killed half way (even `kill -9`) leaves a record that says what to settle.
-- Each row names the lock file its command holds while it lives (a free lock: it died).

-- A `ganger start` (or `plan`) between its checks and the task's record: its worktree and
-- branch may exist, half made. The row goes in the transaction that records the task.
CREATE TABLE starts_pending (
    slug        TEXT PRIMARY KEY,
    worktree    TEXT NOT NULL,
    branch      TEXT NOT NULL,
    base_commit TEXT NOT NULL,
    lock_path   TEXT NOT NULL,
    commander   TEXT NOT NULL,
    started_at  INTEGER NOT NULL
);

-- A `ganger clean` removing a task's worktree, branch, processes and containers. While the
-- row exists no round of the task may begin; `mark_cleaned` deletes it.
CREATE TABLE task_cleaning (
    task_id    INTEGER PRIMARY KEY REFERENCES tasks(id) ON DELETE CASCADE,
    lock_path  TEXT NOT NULL,
    commander  TEXT NOT NULL,
    started_at INTEGER NOT NULL
);

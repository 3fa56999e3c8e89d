-- The agent's saved session of a task (its conversation file, keys redacted), kept after each
-- round of a fleet on a git remote, so that the task's next round on another host continues
-- the same conversation. One row per task: the latest round's.
CREATE TABLE sessions (
    task_id INTEGER PRIMARY KEY,
    round   INTEGER NOT NULL,
    session TEXT NOT NULL,
    data    BLOB NOT NULL,
    at      INTEGER NOT NULL
);

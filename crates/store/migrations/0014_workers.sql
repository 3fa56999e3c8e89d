-- Workers (`ganger worker`) and who claimed a queue item: a scheduler whose claim is dead left
-- its items to whoever takes them over.
ALTER TABLE queue ADD COLUMN claimed_by TEXT;
CREATE TABLE workers (
    name       TEXT PRIMARY KEY,
    host       TEXT NOT NULL,
    pid        INTEGER NOT NULL,
    capacity   INTEGER NOT NULL,
    agents     TEXT NOT NULL DEFAULT '[]',
    sandboxes  TEXT NOT NULL DEFAULT '[]',
    claim      TEXT NOT NULL,
    started_at INTEGER NOT NULL,
    seen_at    INTEGER NOT NULL,
    load       INTEGER NOT NULL DEFAULT 0
);

-- Workers (`ganger worker`) and who claimed a queue item: a scheduler whose claim is dead left
-- its items to whoever takes them over.
ALTER TABLE queue ADD COLUMN claimed_by TEXT;
CREATE TABLE workers (
    name       TEXT PRIMARY KEY,
    host       TEXT NOT NULL,
    pid        BIGINT NOT NULL,
    capacity   BIGINT NOT NULL,
    agents     TEXT NOT NULL DEFAULT '[]',
    sandboxes  TEXT NOT NULL DEFAULT '[]',
    claim      TEXT NOT NULL,
    started_at BIGINT NOT NULL,
    seen_at    BIGINT NOT NULL,
    load       BIGINT NOT NULL DEFAULT 0
);

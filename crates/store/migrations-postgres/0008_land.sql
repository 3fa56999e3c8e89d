-- The merge queue (`ganger land`): tasks queued to land on their base branch, and the batches
-- a lander tests. An item is queued, then testing in a batch, then landed or returned (sent
-- back: a conflict, a culprit); at most one open item per task. A batch records the base's
-- head it was tested on and, before the base moves, the commit it moves the base to (`tip`),
-- so that the next lander can tell a batch that landed from one that did not.
CREATE TABLE land_queue (
    id          BIGSERIAL PRIMARY KEY,
    task_id     BIGINT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
    base        TEXT NOT NULL,
    task_commit TEXT NOT NULL,
    commander   TEXT NOT NULL,
    priority    BIGINT NOT NULL DEFAULT 0,
    fix         BOOLEAN NOT NULL DEFAULT FALSE,
    queued_at   BIGINT NOT NULL,
    state       TEXT NOT NULL,
    batch       BIGINT,
    reason      TEXT,
    ended_at    BIGINT
);
CREATE UNIQUE INDEX land_queue_one_open ON land_queue(task_id) WHERE state IN ('queued', 'testing');
CREATE INDEX land_queue_base ON land_queue(base, state);
CREATE TABLE land_batches (
    id          BIGSERIAL PRIMARY KEY,
    base        TEXT NOT NULL,
    head        TEXT NOT NULL,
    tip         TEXT,
    state       TEXT NOT NULL,
    lander      TEXT NOT NULL,
    progress    TEXT NOT NULL DEFAULT '{}',
    started_at  BIGINT NOT NULL,
    ended_at    BIGINT
);
CREATE INDEX land_batches_base ON land_batches(base, state);
-- Conflicts predicted while tasks run: after a round's snapshot, its task merged in memory with
-- every other open task on its base whose changes share a path, and with the base's head.
-- One row per pair that conflicts (`other` a task's slug, or the base's name with `with_base`),
-- replaced at each round's end of either task; `detail` is the files and their lines.
CREATE TABLE conflicts (
    task       TEXT NOT NULL,
    other      TEXT NOT NULL,
    with_base  BOOLEAN NOT NULL DEFAULT FALSE,
    detail     TEXT NOT NULL,
    at         BIGINT NOT NULL,
    PRIMARY KEY (task, other, with_base)
);

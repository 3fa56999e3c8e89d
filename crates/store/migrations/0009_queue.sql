-- The queue of rounds asked for but not started yet (`start --queue`, `fix --queue`, fleets,
-- broadcasts), the fleets submitted, and the models paused after a rate limit. An item names
-- its task by slug, since a start has no task yet; its prompt is a file beside the round
-- files, never a column. `state`: queued -> delivering (claimed by the one scheduler, with
-- the time) -> delivered (its round is `round`) -> ended (the scheduler has seen the round's
-- end); or refused / stale with `reason`. `after` is a JSON list of slugs that must have ended
-- `done` first; `options` a JSON object of the start's options.
CREATE TABLE queue (
    id          INTEGER PRIMARY KEY,
    slug        TEXT NOT NULL,
    kind        TEXT NOT NULL,
    options     TEXT NOT NULL DEFAULT '{}',
    prompt_file TEXT NOT NULL,
    commander   TEXT NOT NULL,
    generation  INTEGER,
    fleet       TEXT,
    after       TEXT NOT NULL DEFAULT '[]',
    not_before  INTEGER NOT NULL DEFAULT 0,
    state       TEXT NOT NULL DEFAULT 'queued',
    reason      TEXT,
    round       INTEGER,
    claimed_at  INTEGER,
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL
);

CREATE INDEX queue_open ON queue(state, id);
CREATE INDEX queue_fleet ON queue(fleet, id);

CREATE TABLE fleets (
    name       TEXT PRIMARY KEY,
    file       TEXT,
    limits     TEXT NOT NULL DEFAULT '{}',
    created_at INTEGER NOT NULL
);

CREATE TABLE model_pauses (
    model   TEXT PRIMARY KEY,
    until   INTEGER NOT NULL,
    strikes INTEGER NOT NULL,
    reason  TEXT
);

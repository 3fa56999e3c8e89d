-- Races (issue 40): one brief run by several attempts, each a task `SLUG.N`, and a winner
-- chosen on evidence. `races` holds a race's request (what its driver needs to resume it:
-- the attempts' spec and the options, as JSON) and its end, written once: `status` goes from
-- `running` to `won` or `failed` by one conditional update, so a winner is never picked twice.
-- `race_verdicts` holds each pairwise judgement once (`a` shown as side A, `b` as side B).
CREATE TABLE races (
    slug        TEXT PRIMARY KEY,
    owner       TEXT NOT NULL,
    spec        TEXT NOT NULL,
    attempts    INTEGER NOT NULL,
    request     TEXT NOT NULL,
    status      TEXT NOT NULL DEFAULT 'running',
    winner      INTEGER,
    decision    TEXT,
    created_at  INTEGER NOT NULL,
    ended_at    INTEGER
);

CREATE TABLE race_verdicts (
    race     TEXT NOT NULL REFERENCES races(slug) ON DELETE CASCADE,
    a        INTEGER NOT NULL,
    b        INTEGER NOT NULL,
    winner   TEXT NOT NULL,
    reasons  TEXT NOT NULL,
    at       INTEGER NOT NULL,
    PRIMARY KEY (race, a, b)
);

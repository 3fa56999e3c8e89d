-- Roles and the pipeline. A role's rounds are a child task of the pipeline's task: its own
-- session, sharing the parent's worktree (`parent` names the parent task, `role` the role;
-- both NULL for an ordinary task). `pipelines` holds one pipeline's state per task: its stage,
-- the plan's version and steps, the review loop's round and each reviewer's last verdict (a
-- JSON list of the store's ReviewerVerdict).
ALTER TABLE tasks ADD COLUMN parent INTEGER REFERENCES tasks(id) ON DELETE CASCADE;
ALTER TABLE tasks ADD COLUMN role TEXT;
CREATE INDEX tasks_parent ON tasks(parent);

CREATE TABLE pipelines (
    task_id       INTEGER PRIMARY KEY REFERENCES tasks(id) ON DELETE CASCADE,
    stage         TEXT NOT NULL,
    reason        TEXT,
    brief         TEXT NOT NULL,
    plan_version  INTEGER NOT NULL DEFAULT 0,
    steps_total   INTEGER NOT NULL DEFAULT 0,
    steps_done    INTEGER NOT NULL DEFAULT 0,
    review_round  INTEGER NOT NULL DEFAULT 0,
    verdicts      TEXT NOT NULL DEFAULT '[]',
    updated_at    INTEGER NOT NULL
);

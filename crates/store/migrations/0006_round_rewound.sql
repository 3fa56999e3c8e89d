-- Rewinding a task (`ganger rewind SLUG --to N`): the rounds after N are kept, marked
-- rewound, so that reports still show them but nothing counts them as the task's state; and
-- the note the task's next round begins with when its session could not be forked to the
-- rewound point (a summary of the rounds kept), cleared once that round is recorded.
ALTER TABLE rounds ADD COLUMN rewound INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tasks ADD COLUMN resume_note TEXT;
-- Where the next round forks the agent's session (Claude Code: a session and the uuid of its
-- last answer to keep), as JSON; moved to the round that starts next, which uses it.
ALTER TABLE tasks ADD COLUMN fork_from TEXT;
ALTER TABLE rounds ADD COLUMN fork_from TEXT;

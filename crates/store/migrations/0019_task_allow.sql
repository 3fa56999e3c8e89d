-- The hosts a task's `gateway` rounds may reach through the gateway's proxy besides their
-- model (`--allow HOST:PORT`), added to `[sandbox] allow`: a JSON list.
ALTER TABLE tasks ADD COLUMN allow TEXT NOT NULL DEFAULT '[]';

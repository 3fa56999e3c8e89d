-- Where the task's rounds run: 'local', 'bwrap' or 'docker'; the sandbox's network, 'shared'
-- or 'none'; and extra writable paths inside the worktree (a JSON list).
ALTER TABLE tasks ADD COLUMN sandbox TEXT NOT NULL DEFAULT 'local';
ALTER TABLE tasks ADD COLUMN network TEXT NOT NULL DEFAULT 'shared';
ALTER TABLE tasks ADD COLUMN rw TEXT NOT NULL DEFAULT '[]';

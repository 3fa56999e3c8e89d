-- What the agent may do in the task's worktree: 'write' or 'read-only' (mapped per agent).
ALTER TABLE tasks ADD COLUMN permission TEXT NOT NULL DEFAULT 'write';

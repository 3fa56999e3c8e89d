-- When `ganger clean` last removed what the task left (its worktree, branch, processes,
-- containers); NULL while nothing was cleaned. The task's record and round files stay.
ALTER TABLE tasks ADD COLUMN cleaned_at INTEGER;

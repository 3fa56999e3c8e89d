-- Whether a task's rounds go to a warm agent (`--warm`, `--cold`): NULL follows `[warm]
-- default` in ganger.toml.
ALTER TABLE tasks ADD COLUMN warm INTEGER;

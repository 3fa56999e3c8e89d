-- The checks of a round (ganger.toml's [[checks]] and the command line's --check): what was
-- to run, and once the round ended, how each went (a JSON list of the store's CheckRun).
ALTER TABLE rounds ADD COLUMN checks TEXT NOT NULL DEFAULT '[]';

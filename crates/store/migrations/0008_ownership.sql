-- Ownership and inbound policy. `owner` and `generation` exist since schema 1; an empty owner
-- is a released task nobody owns. `inbound` says what happens to a new round sent to the
-- task: `accept` runs it, `hold` queues it until the policy is accept again, `refuse`
-- rejects it. `allowed` is a JSON list of commanders who may send rounds besides the owner.
ALTER TABLE tasks ADD COLUMN inbound TEXT NOT NULL DEFAULT 'accept';
ALTER TABLE tasks ADD COLUMN allowed TEXT NOT NULL DEFAULT '[]';

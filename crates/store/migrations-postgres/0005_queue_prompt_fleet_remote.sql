-- A queued round's prompt kept in the store itself, so that a worker on another host can read
-- it (items queued before this keep their prompt file), and the git remote a fleet names, from
-- which workers on any host get the repository and to which they push each round.
ALTER TABLE queue ADD COLUMN prompt TEXT;
ALTER TABLE fleets ADD COLUMN remote TEXT;

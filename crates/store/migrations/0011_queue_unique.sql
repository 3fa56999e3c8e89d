-- "Already queued" held by the store (issue 13, item 7). The check was a read then a write,
-- so racing `start --queue` commands and concurrent `fleet run`s of one file queued the same
-- work several times: duplicate starts that were refused at delivery ("task exists", shown
-- against tasks that had ended done) and "continue" rounds sent twice. Now at most one open
-- item (queued, delivering, delivered) per slug is a start, and at most one belongs to a
-- fleet; a second insert fails on the index, whatever the timing.
--
-- Duplicates a database holds already are settled first, per slug: the item furthest along
-- stays (delivered, then delivering, then queued; the oldest first). A queued duplicate is
-- deleted: it never became a round, and would only have been refused at delivery or sent
-- its work a second time (its prompt file stays beside the task's round files). A claimed or
-- delivered duplicate keeps its row and is `ended`, its reason naming the item kept.

CREATE INDEX queue_slug ON queue(slug, state);

-- Starts.
WITH ranked AS (
    SELECT id, state, ROW_NUMBER() OVER w AS n
    FROM queue WHERE kind = 'start' AND state IN ('queued', 'delivering', 'delivered')
    WINDOW w AS (PARTITION BY slug ORDER BY
        CASE state WHEN 'delivered' THEN 0 WHEN 'delivering' THEN 1 ELSE 2 END, id)
)
DELETE FROM queue WHERE id IN (SELECT id FROM ranked WHERE n > 1 AND state = 'queued');

WITH ranked AS (
    SELECT id, FIRST_VALUE(id) OVER w AS kept, ROW_NUMBER() OVER w AS n
    FROM queue WHERE kind = 'start' AND state IN ('queued', 'delivering', 'delivered')
    WINDOW w AS (PARTITION BY slug ORDER BY
        CASE state WHEN 'delivered' THEN 0 WHEN 'delivering' THEN 1 ELSE 2 END, id)
)
UPDATE queue SET state = 'ended',
    reason = 'a duplicate of queue item ' || (SELECT kept FROM ranked WHERE ranked.id = queue.id)
        || ', closed by migration 0011',
    updated_at = CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)
WHERE id IN (SELECT id FROM ranked WHERE n > 1);

-- Fleets' items.
WITH ranked AS (
    SELECT id, state, ROW_NUMBER() OVER w AS n
    FROM queue WHERE fleet IS NOT NULL AND state IN ('queued', 'delivering', 'delivered')
    WINDOW w AS (PARTITION BY slug ORDER BY
        CASE state WHEN 'delivered' THEN 0 WHEN 'delivering' THEN 1 ELSE 2 END, id)
)
DELETE FROM queue WHERE id IN (SELECT id FROM ranked WHERE n > 1 AND state = 'queued');

WITH ranked AS (
    SELECT id, FIRST_VALUE(id) OVER w AS kept, ROW_NUMBER() OVER w AS n
    FROM queue WHERE fleet IS NOT NULL AND state IN ('queued', 'delivering', 'delivered')
    WINDOW w AS (PARTITION BY slug ORDER BY
        CASE state WHEN 'delivered' THEN 0 WHEN 'delivering' THEN 1 ELSE 2 END, id)
)
UPDATE queue SET state = 'ended',
    reason = 'a duplicate of queue item ' || (SELECT kept FROM ranked WHERE ranked.id = queue.id)
        || ', closed by migration 0011',
    updated_at = CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)
WHERE id IN (SELECT id FROM ranked WHERE n > 1);

CREATE UNIQUE INDEX queue_one_open_start ON queue(slug)
    WHERE kind = 'start' AND state IN ('queued', 'delivering', 'delivered');
CREATE UNIQUE INDEX queue_one_open_fleet_item ON queue(slug)
    WHERE fleet IS NOT NULL AND state IN ('queued', 'delivering', 'delivered');

-- Liveness as leases. A claim of a name is a row here while some process holds it: `fence`
-- grows by one with every new holder of the name (a holder whose renewal finds another fence
-- has lost the claim), and `expires_at` is set from the database's clock, never a host's. The
-- holder renews it well before it runs out; a row past `expires_at`, or no row, is a dead
-- holder. A release deletes the row and notifies channel `ganger_claim_end` with the name.
CREATE TABLE leases (
    name        TEXT PRIMARY KEY,
    fence       BIGINT NOT NULL,
    expires_at  TIMESTAMPTZ NOT NULL,
    -- Who holds it, for people reading the table (host name and pid); not used by ganger.
    holder      TEXT NOT NULL DEFAULT ''
);
-- Every claim's fence comes from this one sequence: a fence is never given twice, not even
-- to a name claimed again after its row was deleted.
CREATE SEQUENCE lease_fence;

-- A finished round's stream packed: its bytes as one gzip object in `packed`, its chunks
-- deleted in the same transaction, so that a reader's one statement sees either the rows or
-- the object, never neither. `streams_unpacked` finds the ended rounds still to pack.
ALTER TABLE streams ADD COLUMN packed BYTEA;
CREATE INDEX streams_unpacked ON streams(round_id) WHERE packed IS NULL;

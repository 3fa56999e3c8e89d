-- Rounds' streams (the agent's stdout and stderr) as rows. `streams` says a stream was made
-- (and which making of it: `generation` grows when it is made anew, so that a writer of an
-- earlier making appends nothing); `stream_chunks` holds its bytes as they were appended,
-- each chunk at its byte offset `start`. An append notifies channel `ganger_stream` with
-- `ROUND_ID:KIND`.
CREATE TABLE streams (
    round_id    BIGINT NOT NULL REFERENCES rounds(id) ON DELETE CASCADE,
    kind        TEXT NOT NULL,
    generation  BIGINT NOT NULL,
    PRIMARY KEY (round_id, kind)
);

CREATE TABLE stream_chunks (
    round_id    BIGINT NOT NULL,
    kind        TEXT NOT NULL,
    start       BIGINT NOT NULL,
    bytes       BYTEA NOT NULL,
    PRIMARY KEY (round_id, kind, start),
    FOREIGN KEY (round_id, kind) REFERENCES streams(round_id, kind) ON DELETE CASCADE
);

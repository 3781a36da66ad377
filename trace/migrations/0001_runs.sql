-- Runs and what they did: one row per run (an agent run, a ptool call, a
-- workflow, a ReAct trajectory), its model calls, tool calls and ptool
-- calls. Times are microseconds since the Unix epoch, durations
-- microseconds; JSON goes in TEXT columns. The SQL is the subset SQLite and
-- PostgreSQL read alike.
CREATE TABLE runs (
    id                TEXT PRIMARY KEY,
    parent_id         TEXT NOT NULL DEFAULT '',
    kind              TEXT NOT NULL,
    name              TEXT NOT NULL DEFAULT '',
    model             TEXT NOT NULL DEFAULT '',
    mode              TEXT NOT NULL DEFAULT '',
    started_us        BIGINT NOT NULL,
    duration_us       BIGINT NOT NULL DEFAULT 0,
    status            TEXT NOT NULL,
    error_code        TEXT NOT NULL DEFAULT '',
    error_message     TEXT NOT NULL DEFAULT '',
    prompt_tokens     BIGINT NOT NULL DEFAULT 0,
    completion_tokens BIGINT NOT NULL DEFAULT 0,
    cost              DOUBLE PRECISION NOT NULL DEFAULT 0,
    iterations        INTEGER NOT NULL DEFAULT 0,
    tool_calls        INTEGER NOT NULL DEFAULT 0,
    input             TEXT NOT NULL DEFAULT '',
    output            TEXT NOT NULL DEFAULT '',
    detail            TEXT NOT NULL DEFAULT ''
);
CREATE INDEX runs_started ON runs (started_us, id);
CREATE INDEX runs_kind ON runs (kind, started_us);
CREATE INDEX runs_name ON runs (kind, name, duration_us);
CREATE INDEX runs_model ON runs (model, started_us);
CREATE INDEX runs_status ON runs (status, started_us);
CREATE INDEX runs_parent ON runs (parent_id);

CREATE TABLE model_calls (
    run_id            TEXT NOT NULL,
    seq               INTEGER NOT NULL,
    mode              TEXT NOT NULL DEFAULT '',
    prompt_tokens     BIGINT NOT NULL DEFAULT 0,
    completion_tokens BIGINT NOT NULL DEFAULT 0,
    latency_us        BIGINT NOT NULL DEFAULT 0,
    cost              DOUBLE PRECISION NOT NULL DEFAULT 0,
    request_hash      TEXT NOT NULL DEFAULT '',
    text              TEXT NOT NULL DEFAULT '',
    calls             TEXT NOT NULL DEFAULT '',
    error             TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (run_id, seq)
);

CREATE TABLE tool_calls (
    run_id      TEXT NOT NULL,
    seq         INTEGER NOT NULL,
    iteration   INTEGER NOT NULL DEFAULT 0,
    call_id     TEXT NOT NULL DEFAULT '',
    tool        TEXT NOT NULL,
    args        TEXT NOT NULL DEFAULT '',
    result      TEXT NOT NULL DEFAULT '',
    truncated   INTEGER NOT NULL DEFAULT 0,
    is_error    INTEGER NOT NULL DEFAULT 0,
    outcome     TEXT NOT NULL DEFAULT '',
    repairs     TEXT NOT NULL DEFAULT '',
    duration_us BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (run_id, seq)
);
CREATE INDEX tool_calls_tool ON tool_calls (tool, duration_us);

CREATE TABLE ptool_calls (
    run_id      TEXT NOT NULL,
    seq         INTEGER NOT NULL,
    ptool       TEXT NOT NULL,
    input       TEXT NOT NULL DEFAULT '',
    output      TEXT NOT NULL DEFAULT '',
    attempts    TEXT NOT NULL DEFAULT '',
    repairs     TEXT NOT NULL DEFAULT '',
    source      TEXT NOT NULL DEFAULT '',
    fallback    INTEGER NOT NULL DEFAULT 0,
    is_error    INTEGER NOT NULL DEFAULT 0,
    duration_us BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (run_id, seq)
);
CREATE INDEX ptool_calls_ptool ON ptool_calls (ptool, is_error);

-- What the GenAI conventions and the span tree still lacked. A run keeps
-- the provider of its model, as the OpenTelemetry GenAI conventions name it
-- (gen_ai.provider.name: 'openai', 'anthropic', 'gcp.gemini', 'ollama');
-- a tool call the class of its error (a ptk.Code: INVALID_TOOL_CALL for a
-- model's mistake, TOOL_EXECUTION_FAILED for the tool's, TOOL_CALL_DENIED),
-- so that an action that failed says why as a code and not only in words.
ALTER TABLE runs ADD COLUMN provider TEXT NOT NULL DEFAULT '';
ALTER TABLE tool_calls ADD COLUMN error_code TEXT NOT NULL DEFAULT '';
-- Steps: the spans of a run that are neither model, tool nor ptool calls
-- (a distill run's rounds, each candidate's checks), named 'step/N' as a
-- call's parent names them, with their verdict ('ok', 'error', 'skipped')
-- and a short note ('12/14 held-out calls equal'). A model call may hang
-- under a step (the calls that wrote a candidate, under its round).
CREATE TABLE steps (
    run_id      TEXT NOT NULL,
    seq         INTEGER NOT NULL,
    name        TEXT NOT NULL,
    status      TEXT NOT NULL DEFAULT '',
    note        TEXT NOT NULL DEFAULT '',
    attrs       TEXT NOT NULL DEFAULT '',
    started_us  BIGINT NOT NULL DEFAULT 0,
    duration_us BIGINT NOT NULL DEFAULT 0,
    parent      TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (run_id, seq)
);

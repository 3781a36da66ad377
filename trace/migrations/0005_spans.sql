-- Runs seen as they happen, and as a tree of spans. A run's row is written
-- when it starts, with status 'running', by a writer that names itself in
-- owner (host, process id, a random token) and refreshes heartbeat_us
-- while it lives; a running run whose writer died is marked 'interrupted'
-- when the store is next opened. Each model, tool and ptool call has when
-- it started and its parent span in the run ('' for the run itself,
-- 'tool/3' for the run's tool call of seq 3, 'ptool/0' for its first ptool
-- call), so that a ReAct action's ptool call and that call's model calls
-- hang under it.
ALTER TABLE runs ADD COLUMN owner TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN heartbeat_us BIGINT NOT NULL DEFAULT 0;
CREATE INDEX runs_owner ON runs (status, owner);
ALTER TABLE model_calls ADD COLUMN started_us BIGINT NOT NULL DEFAULT 0;
ALTER TABLE model_calls ADD COLUMN parent TEXT NOT NULL DEFAULT '';
ALTER TABLE tool_calls ADD COLUMN started_us BIGINT NOT NULL DEFAULT 0;
ALTER TABLE tool_calls ADD COLUMN parent TEXT NOT NULL DEFAULT '';
ALTER TABLE ptool_calls ADD COLUMN started_us BIGINT NOT NULL DEFAULT 0;
ALTER TABLE ptool_calls ADD COLUMN parent TEXT NOT NULL DEFAULT '';

-- Each ptool call's own tokens and cost, so that stats by ptool sum them
-- (a run's sums hold all of its calls together).
ALTER TABLE ptool_calls ADD COLUMN prompt_tokens BIGINT NOT NULL DEFAULT 0;
ALTER TABLE ptool_calls ADD COLUMN completion_tokens BIGINT NOT NULL DEFAULT 0;
ALTER TABLE ptool_calls ADD COLUMN cost DOUBLE PRECISION NOT NULL DEFAULT 0;

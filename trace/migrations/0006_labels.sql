-- Feedback: a run, or one call in it (span 'ptool/0', 'tool/2', as a call's
-- parent names it), marked good or bad with a note, by 'ptk traces label'
-- or the dashboard. The newest label of a span replaces the one before.
CREATE TABLE labels (
    run_id     TEXT NOT NULL,
    span       TEXT NOT NULL DEFAULT '',
    label      TEXT NOT NULL,
    note       TEXT NOT NULL DEFAULT '',
    created_us BIGINT NOT NULL,
    PRIMARY KEY (run_id, span)
);
CREATE INDEX labels_label ON labels (label, run_id);

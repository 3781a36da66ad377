-- Conversations that 'ptk run --conversation NAME' continues: the messages
-- as JSON, replaced whole on every save.
CREATE TABLE conversations (
    id         TEXT PRIMARY KEY,
    updated_us BIGINT NOT NULL,
    messages   TEXT NOT NULL
);

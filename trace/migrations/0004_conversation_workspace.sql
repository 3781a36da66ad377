-- The folder each conversation of 'ptk chat' was held in, so that
-- 'ptk chat --continue' and /conversations find the workspace's own; ''
-- for conversations of ptk run and ptk serve, and those made before.
ALTER TABLE conversations ADD COLUMN workspace TEXT NOT NULL DEFAULT '';
CREATE INDEX conversations_workspace ON conversations (workspace, updated_us);

// Package trace is ptk's trace store: every run (an agent run, a ptool
// call, a workflow, a ReAct trajectory) recorded with its model calls, tool
// calls and ptool calls, so that a person can query and look at it and the
// distiller can learn from it; and the conversations that
// 'ptk run --conversation' continues.
//
// A store is one SQLite file (modernc.org/sqlite, pure Go; WAL and a busy
// timeout, so that several processes share it), or a PostgreSQL database
// named by a postgres:// URL, shared by replicas. Open applies the schema's
// migrations (embedded migrations/*.sql) and refuses a store made by a newer
// ptk. Write stores records in one transaction; a Writer does it off the
// caller's path, in batches, and never fails or blocks the caller.
//
// The store knows nothing of the agent: package trace/record turns an
// agent's events into records. Arrows point down: commands → trace/record →
// agent; trace → the ptk vocabulary.
package trace

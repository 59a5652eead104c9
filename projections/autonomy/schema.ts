/** Numbered migrations of the `autonomy` read model; index + 1 is the schema version. */
export const autonomyMigrations = [
  `CREATE TABLE autonomy_decisions (
     decision_id TEXT PRIMARY KEY,
     category TEXT NOT NULL,
     key TEXT NOT NULL,
     owner TEXT NOT NULL,
     episode INTEGER NOT NULL,
     status TEXT NOT NULL,
     disposition TEXT NOT NULL,
     disposition_reason TEXT,
     approved_by TEXT,
     signal TEXT NOT NULL,
     plan TEXT NOT NULL,
     plan_digest TEXT NOT NULL,
     expires_at TEXT,
     approvals TEXT NOT NULL DEFAULT '[]',
     cooldown_until TEXT,
     settle_until TEXT,
     remediation TEXT,
     last_outcome TEXT,
     ineffective_streak INTEGER NOT NULL DEFAULT 0,
     escalated INTEGER NOT NULL DEFAULT 0,
     closed_reason TEXT,
     opened_at TEXT NOT NULL,
     updated_at TEXT NOT NULL
   );
   CREATE INDEX autonomy_decisions_by_status ON autonomy_decisions (status, expires_at);
   CREATE TABLE autonomy_history (
     seq INTEGER NOT NULL,
     idx INTEGER NOT NULL,
     decision_id TEXT NOT NULL,
     episode INTEGER NOT NULL,
     type TEXT NOT NULL,
     actor TEXT NOT NULL,
     time TEXT NOT NULL,
     data TEXT NOT NULL,
     PRIMARY KEY (seq, idx)
   );
   CREATE INDEX autonomy_history_by_decision ON autonomy_history (decision_id, seq);
   CREATE TABLE autonomy_budgets (
     budget_id TEXT PRIMARY KEY,
     scope TEXT NOT NULL,
     window_start TEXT NOT NULL,
     limit_count INTEGER NOT NULL,
     consumed INTEGER NOT NULL
   );
   CREATE TABLE autonomy_overrides (category TEXT PRIMARY KEY, disposition TEXT NOT NULL);
   CREATE TABLE autonomy_paused (owner TEXT PRIMARY KEY, reason TEXT, since TEXT NOT NULL);
   CREATE TABLE autonomy_halt (id INTEGER PRIMARY KEY CHECK (id = 1), halted INTEGER NOT NULL, reason TEXT, since TEXT NOT NULL);`,
  // Issue 31: budgets are sliding windows, one per scope with its uses (the fixed-window rows bound nothing any more).
  `DROP TABLE autonomy_budgets;
   CREATE TABLE autonomy_budgets (scope TEXT PRIMARY KEY, budget_id TEXT NOT NULL, limit_count INTEGER NOT NULL, window_ms INTEGER NOT NULL);
   CREATE TABLE autonomy_budget_uses (
     scope TEXT NOT NULL,
     decision_id TEXT NOT NULL,
     episode INTEGER NOT NULL,
     at TEXT NOT NULL,
     PRIMARY KEY (scope, decision_id, episode)
   );
   CREATE INDEX autonomy_budget_uses_by_time ON autonomy_budget_uses (scope, at);`,
];

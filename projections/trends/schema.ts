/**
 * Numbered migrations of the `trends` read model; index + 1 is the schema version. Bucket tables are keyed by site and
 * hour (ISO, top of the hour, of the event's log time); `trend_workflows`, `trend_attempts` and `trend_waiting` hold
 * what the fold needs between events (a workflow's site and operation, an attempt's start, the waiting queue) and are
 * emptied as workflows end.
 */
export const trendsMigrations = [
  `CREATE TABLE trend_workflows (
     workflow_id TEXT PRIMARY KEY,
     site_id TEXT NOT NULL,
     operation TEXT NOT NULL
   );
   CREATE TABLE trend_attempts (
     workflow_id TEXT NOT NULL,
     step_index INTEGER NOT NULL,
     attempt INTEGER NOT NULL,
     started_ms INTEGER NOT NULL,
     PRIMARY KEY (workflow_id, step_index, attempt)
   );
   CREATE TABLE trend_waiting (
     workflow_id TEXT PRIMARY KEY,
     site_id TEXT NOT NULL
   );
   CREATE INDEX trend_waiting_by_site ON trend_waiting (site_id);
   CREATE TABLE trend_operations (
     site_id TEXT NOT NULL,
     hour TEXT NOT NULL,
     operation TEXT NOT NULL,
     started INTEGER NOT NULL DEFAULT 0,
     completed INTEGER NOT NULL DEFAULT 0,
     failed INTEGER NOT NULL DEFAULT 0,
     cancelled INTEGER NOT NULL DEFAULT 0,
     PRIMARY KEY (site_id, hour, operation)
   );
   CREATE TABLE trend_failures (
     site_id TEXT NOT NULL,
     hour TEXT NOT NULL,
     code TEXT NOT NULL,
     workflows INTEGER NOT NULL DEFAULT 0,
     steps INTEGER NOT NULL DEFAULT 0,
     PRIMARY KEY (site_id, hour, code)
   );
   CREATE TABLE trend_steps (
     site_id TEXT NOT NULL,
     hour TEXT NOT NULL,
     step_id TEXT NOT NULL,
     succeeded INTEGER NOT NULL DEFAULT 0,
     bytes INTEGER NOT NULL DEFAULT 0,
     bytes_ms INTEGER NOT NULL DEFAULT 0,
     PRIMARY KEY (site_id, hour, step_id)
   );
   CREATE TABLE trend_step_bins (
     site_id TEXT NOT NULL,
     hour TEXT NOT NULL,
     step_id TEXT NOT NULL,
     bin INTEGER NOT NULL,
     count INTEGER NOT NULL,
     PRIMARY KEY (site_id, hour, step_id, bin)
   );
   CREATE TABLE trend_capacity (
     site_id TEXT NOT NULL,
     hour TEXT NOT NULL,
     requested INTEGER NOT NULL DEFAULT 0,
     admitted INTEGER NOT NULL DEFAULT 0,
     peak_waiting INTEGER NOT NULL DEFAULT 0,
     waiting INTEGER NOT NULL DEFAULT 0,
     PRIMARY KEY (site_id, hour)
   );`,
];

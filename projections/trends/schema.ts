/**
 * Numbered migrations of the `trends` read model; index + 1 is the schema version. Bucket tables are keyed by site,
 * tenant and hour (ISO, top of the hour, of the event's log time); `trend_workflows`, `trend_attempts`,
 * `trend_waiting` and `trend_requests` hold what the fold needs between events (a workflow's site, tenant and
 * operation, an attempt's start, the waiting queue, the tenant an operation was asked for) and are emptied as
 * workflows end.
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
  // v2, the tenant dimension: a tenant reads the trends of its own operations. The buckets of v1 cannot be split by
  // tenant after the fact, so every table is made again and the checkpoint goes back to 0: the projector replays the
  // log into it (a read model at 0 catches up alone, as a new one does). `tenant_id` is '' for an operation of no
  // tenant; `trend_capacity` keeps the whole site's queue under '*' (peaks do not add up over tenants) and each
  // tenant's own share of it under its id.
  `DROP TABLE trend_workflows;
   DROP TABLE trend_attempts;
   DROP TABLE trend_waiting;
   DROP TABLE trend_operations;
   DROP TABLE trend_failures;
   DROP TABLE trend_steps;
   DROP TABLE trend_step_bins;
   DROP TABLE trend_capacity;
   UPDATE _checkpoint SET seq = 0, command_id = NULL;
   CREATE TABLE trend_requests (
     workflow_id TEXT PRIMARY KEY,
     tenant_id TEXT NOT NULL
   );
   CREATE TABLE trend_workflows (
     workflow_id TEXT PRIMARY KEY,
     site_id TEXT NOT NULL,
     tenant_id TEXT NOT NULL,
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
     site_id TEXT NOT NULL,
     tenant_id TEXT NOT NULL
   );
   CREATE INDEX trend_waiting_by_site ON trend_waiting (site_id, tenant_id);
   CREATE TABLE trend_operations (
     site_id TEXT NOT NULL,
     tenant_id TEXT NOT NULL,
     hour TEXT NOT NULL,
     operation TEXT NOT NULL,
     started INTEGER NOT NULL DEFAULT 0,
     completed INTEGER NOT NULL DEFAULT 0,
     failed INTEGER NOT NULL DEFAULT 0,
     cancelled INTEGER NOT NULL DEFAULT 0,
     PRIMARY KEY (site_id, tenant_id, hour, operation)
   );
   CREATE TABLE trend_failures (
     site_id TEXT NOT NULL,
     tenant_id TEXT NOT NULL,
     hour TEXT NOT NULL,
     code TEXT NOT NULL,
     workflows INTEGER NOT NULL DEFAULT 0,
     steps INTEGER NOT NULL DEFAULT 0,
     PRIMARY KEY (site_id, tenant_id, hour, code)
   );
   CREATE TABLE trend_steps (
     site_id TEXT NOT NULL,
     tenant_id TEXT NOT NULL,
     hour TEXT NOT NULL,
     step_id TEXT NOT NULL,
     succeeded INTEGER NOT NULL DEFAULT 0,
     bytes INTEGER NOT NULL DEFAULT 0,
     bytes_ms INTEGER NOT NULL DEFAULT 0,
     PRIMARY KEY (site_id, tenant_id, hour, step_id)
   );
   CREATE TABLE trend_step_bins (
     site_id TEXT NOT NULL,
     tenant_id TEXT NOT NULL,
     hour TEXT NOT NULL,
     step_id TEXT NOT NULL,
     bin INTEGER NOT NULL,
     count INTEGER NOT NULL,
     PRIMARY KEY (site_id, tenant_id, hour, step_id, bin)
   );
   CREATE TABLE trend_capacity (
     site_id TEXT NOT NULL,
     tenant_id TEXT NOT NULL,
     hour TEXT NOT NULL,
     requested INTEGER NOT NULL DEFAULT 0,
     admitted INTEGER NOT NULL DEFAULT 0,
     peak_waiting INTEGER NOT NULL DEFAULT 0,
     waiting INTEGER NOT NULL DEFAULT 0,
     PRIMARY KEY (site_id, tenant_id, hour)
   );`,
];

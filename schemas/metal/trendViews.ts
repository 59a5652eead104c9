import { z } from 'zod';
import { NodeOperation } from './workflow.ts';

const Count = z.number().int().nonnegative();
const Hour = z.string().describe('the hour bucket: ISO 8601 at the top of an hour, UTC');

/** Workflows of one operation in one hour: started, and ended each way (by the hour they ended in). */
export const OperationTrend = z.object({ hour: Hour, operation: NodeOperation, started: Count, completed: Count, failed: Count, cancelled: Count });
export type OperationTrend = z.infer<typeof OperationTrend>;

/** Failures of one code in one hour: workflows that failed with it, and step attempts that failed with it (retried ones too). */
export const FailureTrend = z.object({ hour: Hour, code: z.string(), workflows: Count, steps: Count });
export type FailureTrend = z.infer<typeof FailureTrend>;

/**
 * Succeeded step attempts of one step id (in one hour, or over the whole range): how many, their duration percentiles
 * (estimates from a log-scale histogram, within `durationRelativeError` of the exact value), and for steps whose output
 * carries bytes (`disk.wipe`, `image.write`) the bytes and the throughput over those steps' durations.
 */
export const StepTrend = z.object({
  stepId: z.string(),
  count: Count,
  p50Ms: z.number().nonnegative(),
  p95Ms: z.number().nonnegative(),
  bytes: Count,
  bytesPerSecond: z.number().nonnegative().nullable(),
});
export type StepTrend = z.infer<typeof StepTrend>;

/** Capped operations (deploy, release, retire) waiting for a site slot: how many asked, were admitted, and the queue's depth. */
export const CapacityTrend = z.object({
  hour: Hour,
  requested: Count,
  admitted: Count,
  /** The deepest the queue was in the hour (summed over sites when no site is asked for). */
  peakWaiting: Count,
  /** The depth at the hour's end. */
  waiting: Count,
});
export type CapacityTrend = z.infer<typeof CapacityTrend>;

/** `GET /v1/trends`: hourly buckets of one site (or all), `from` (inclusive) to `to` (exclusive), whole hours. */
export const TrendsView = z.object({
  siteId: z.string().nullable(),
  /** A tenant token's own tenant: the figures of its operations alone; null for staff (every tenant's and none). */
  tenantId: z.string().nullable(),
  from: Hour,
  to: Hour,
  /** Every hour of the range, oldest first: the axis every series below is drawn on. */
  hours: z.array(Hour),
  operations: z.array(OperationTrend),
  failures: z.array(FailureTrend),
  capacity: z.array(CapacityTrend),
  /** Per hour and step id. */
  steps: z.array(StepTrend.extend({ hour: Hour })),
  /** Per step id over the whole range (the hours' histograms added up, not their percentiles averaged). */
  stepTotals: z.array(StepTrend),
  /** The largest relative error of a `p50Ms` / `p95Ms` against the exact percentile of the same durations. */
  durationRelativeError: z.number().positive(),
  /** The `trends` read model's checkpoint the buckets were read at. */
  seq: z.number().int().nonnegative(),
});
export type TrendsView = z.infer<typeof TrendsView>;

/** The longest range one request reads: 31 days of hours. */
export const maxTrendHours = 31 * 24;

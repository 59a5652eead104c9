import { DeliverPolicy, type JetStreamClient } from '@nats-io/jetstream';
import { Streams } from '../../../schemas/subjects.ts';

interface RawEvent {
  type: string;
  data: { workflowId: string; stepIndex?: number; stepId?: string; attempt?: number; operation?: string };
  metadata: { time: string };
}

export interface StepStats {
  workflows: number;
  workflowsByOperation: Record<string, number>;
  stepsStarted: number;
  stepsSucceeded: number;
  stepsFailed: number;
  /** StepScheduled → StepStarted, from the events' own timestamps (ms). */
  scheduling: Latency;
  /**
   * The same interval split where the work message was seen on the wire (the driver's core subscription on step work):
   * StepScheduled → work published (the orchestrator's lag behind the log), work published → StepStarted (the work
   * queue and the executor's claim); and scheduling by the workflow's operation.
   */
  schedulingSplit?: { toWorkPublished: Latency; workToStarted: Latency; byOperation: Record<string, Latency> };
  /** StepStarted → StepSucceeded per step id (ms, p50 / p99): where a cycle's time goes. */
  runByStep: Record<string, { count: number; p50: number; p99: number }>;
  /** First and last workflow event time (ms since epoch). */
  firstEventMs: number;
  lastEventMs: number;
}

export interface Latency {
  count: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
}

function latency(xs: number[]): Latency {
  xs.sort((a, b) => a - b);
  return {
    count: xs.length,
    p50: quantile(xs, 0.5),
    p90: quantile(xs, 0.9),
    p99: quantile(xs, 0.99),
    max: xs.at(-1) ?? 0,
    mean: xs.length ? Math.round(xs.reduce((a, b) => a + b, 0) / xs.length) : 0,
  };
}

const quantile = (sorted: number[], q: number) => (sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!);

/** Reads every workflow event of the run back from the log (ordered consumer) and measures step scheduling. */
export async function readStepStats(js: JetStreamClient, workSeenAt?: ReadonlyMap<string, number>): Promise<StepStats> {
  const consumer = await js.consumers.get(Streams.events.name, { filter_subjects: 'bc.evt.metal.workflow.>', deliver_policy: DeliverPolicy.All });
  const scheduled = new Map<string, number>();
  const started = new Map<string, number>();
  const latencies: number[] = [];
  const runs = new Map<string, number[]>();
  const byOp: Record<string, number> = {};
  const operationOf = new Map<string, string>();
  const toWork: number[] = [];
  const workToStart: number[] = [];
  const latencyByOp: Record<string, number[]> = {};
  const counts = { workflows: 0, started: 0, succeeded: 0, failed: 0 };
  let first = Infinity;
  let last = 0;
  const messages = await consumer.consume({ max_messages: 2_000 });
  const stream = await js.jetstreamManager().then((jsm) => jsm.streams.info(Streams.events.name));
  if (stream.state.messages > 0) {
    for await (const m of messages) {
      for (const e of m.json<{ events: RawEvent[] }>().events) {
        const t = Date.parse(e.metadata.time);
        first = Math.min(first, t);
        last = Math.max(last, t);
        const key = `${e.data.workflowId}/${e.data.stepIndex}/${e.data.attempt}`;
        switch (e.type) {
          case 'WorkflowStarted':
            counts.workflows++;
            operationOf.set(e.data.workflowId, e.data.operation ?? '?');
            byOp[e.data.operation ?? '?'] = (byOp[e.data.operation ?? '?'] ?? 0) + 1;
            break;
          case 'StepScheduled':
            scheduled.set(key, t);
            break;
          case 'StepStarted': {
            counts.started++;
            started.set(`${e.data.workflowId}/${e.data.stepIndex}`, t);
            const s = scheduled.get(key);
            if (s !== undefined) {
              latencies.push(t - s);
              (latencyByOp[operationOf.get(e.data.workflowId) ?? '?'] ??= []).push(t - s);
              const w = workSeenAt?.get(key);
              if (w !== undefined) {
                toWork.push(w - s);
                workToStart.push(t - w);
              }
            }
            break;
          }
          case 'StepSucceeded': {
            counts.succeeded++;
            const s = started.get(`${e.data.workflowId}/${e.data.stepIndex}`);
            const id = e.data.stepId ?? '?';
            if (s !== undefined) (runs.get(id) ?? runs.set(id, []).get(id)!).push(t - s);
            break;
          }
          case 'StepFailed':
            counts.failed++;
            break;
        }
      }
      if (m.info.pending === 0) break;
    }
  }
  await messages.close();
  const runByStep: StepStats['runByStep'] = {};
  for (const [id, xs] of runs) {
    xs.sort((a, b) => a - b);
    runByStep[id] = { count: xs.length, p50: quantile(xs, 0.5), p99: quantile(xs, 0.99) };
  }
  return {
    workflows: counts.workflows,
    workflowsByOperation: byOp,
    stepsStarted: counts.started,
    stepsSucceeded: counts.succeeded,
    stepsFailed: counts.failed,
    scheduling: latency(latencies),
    ...(workSeenAt
      ? {
          schedulingSplit: {
            toWorkPublished: latency(toWork),
            workToStarted: latency(workToStart),
            byOperation: Object.fromEntries(Object.entries(latencyByOp).map(([op, xs]) => [op, latency(xs)])),
          },
        }
      : {}),
    runByStep,
    firstEventMs: first,
    lastEventMs: last,
  };
}

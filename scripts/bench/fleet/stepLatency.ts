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
  scheduling: { count: number; p50: number; p90: number; p99: number; max: number; mean: number };
  /** StepStarted → StepSucceeded per step id (ms, p50 / p99): where a cycle's time goes. */
  runByStep: Record<string, { count: number; p50: number; p99: number }>;
  /** First and last workflow event time (ms since epoch). */
  firstEventMs: number;
  lastEventMs: number;
}

const quantile = (sorted: number[], q: number) => (sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!);

/** Reads every workflow event of the run back from the log (ordered consumer) and measures step scheduling. */
export async function readStepStats(js: JetStreamClient): Promise<StepStats> {
  const consumer = await js.consumers.get(Streams.events.name, { filter_subjects: 'bc.evt.metal.workflow.>', deliver_policy: DeliverPolicy.All });
  const scheduled = new Map<string, number>();
  const started = new Map<string, number>();
  const latencies: number[] = [];
  const runs = new Map<string, number[]>();
  const byOp: Record<string, number> = {};
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
            byOp[e.data.operation ?? '?'] = (byOp[e.data.operation ?? '?'] ?? 0) + 1;
            break;
          case 'StepScheduled':
            scheduled.set(key, t);
            break;
          case 'StepStarted': {
            counts.started++;
            started.set(`${e.data.workflowId}/${e.data.stepIndex}`, t);
            const s = scheduled.get(key);
            if (s !== undefined) latencies.push(t - s);
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
  latencies.sort((a, b) => a - b);
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
    scheduling: {
      count: latencies.length,
      p50: quantile(latencies, 0.5),
      p90: quantile(latencies, 0.9),
      p99: quantile(latencies, 0.99),
      max: latencies.at(-1) ?? 0,
      mean: latencies.length ? Math.round(latencies.reduce((a, b) => a + b, 0) / latencies.length) : 0,
    },
    runByStep,
    firstEventMs: first,
    lastEventMs: last,
  };
}

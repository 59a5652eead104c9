import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** The API process's Prometheus metrics. */
export function createMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'bc_process_' });
  return {
    registry,
    commands: new Counter({
      name: 'bc_commands_total',
      help: 'Commands handled, by name and outcome code',
      labelNames: ['command', 'outcome'],
      registers: [registry],
    }),
    commandSeconds: new Histogram({
      name: 'bc_command_duration_seconds',
      help: 'Command handling time, validation to append ack',
      labelNames: ['command'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
      registers: [registry],
    }),
    projectorCheckpoint: new Gauge({
      name: 'bc_projector_checkpoint',
      help: 'Last stream sequence applied to a read model',
      labelNames: ['projection'],
      registers: [registry],
    }),
    projectorLag: new Gauge({
      name: 'bc_projector_lag',
      help: 'Stream messages not yet applied to a read model',
      labelNames: ['projection'],
      registers: [registry],
    }),
    liveStreams: new Gauge({
      name: 'bc_api_live_streams',
      help: 'Server-sent-event streams open now, by stream (`event stream`, `node log stream`): one per browser, not per tab',
      labelNames: ['stream'],
      registers: [registry],
    }),
    liveStreamsOpened: new Counter({
      name: 'bc_api_live_streams_opened_total',
      help: 'Server-sent-event streams opened, by stream',
      labelNames: ['stream'],
      registers: [registry],
    }),
    streamLastSeq: new Gauge({ name: 'bc_stream_last_seq', help: 'Last sequence of the event stream', registers: [registry] }),
    deadLetters: new Gauge({
      name: 'bc_dead_letters',
      help: 'Messages a consumer quarantined (BC_DEAD_LETTERS), by consumer',
      labelNames: ['consumer'],
      registers: [registry],
    }),
  };
}
export type Metrics = ReturnType<typeof createMetrics>;

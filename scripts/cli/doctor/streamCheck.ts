import { jetstreamManager, type JetStreamManager, type StreamInfo } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import type { Finding } from '../../../schemas/doctor.ts';
import type { Config } from '../../../services/platform/config.ts';
import { Buckets } from '../../../schemas/subjects.ts';
import { bucketStream, declaredStreams } from '../../../services/platform/nats/streams.ts';
import { finding } from './finding.ts';

const sameSet = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((x) => b.includes(x));

/** JetStream is on for the platform's account, and every declared stream exists as declared. */
export async function checkStreams(nc: NatsConnection, config: Config): Promise<{ findings: Finding[]; jsm?: JetStreamManager }> {
  let jsm: JetStreamManager;
  try {
    jsm = await jetstreamManager(nc, { timeout: 10_000 });
    await jsm.getAccountInfo();
  } catch (err) {
    return { findings: [finding('jetstream', 'JETSTREAM_UNAVAILABLE', 'error', `JetStream does not answer for the platform's account: ${String(err)}`)] };
  }
  const findings: Finding[] = [finding('jetstream', 'JETSTREAM_OK', 'info', 'JetStream answers')];
  const problems: Finding[] = [];
  for (const declared of declaredStreams(config)) {
    const info: StreamInfo | undefined = await jsm.streams.info(declared.name).catch(() => undefined);
    const name = declared.name;
    if (!info) {
      problems.push(
        finding('streams', 'STREAM_MISSING', 'error', `stream ${name} does not exist (every control-plane process creates it at start)`, { stream: name }),
      );
      continue;
    }
    const actual = info.config;
    if (!sameSet(actual.subjects ?? [], declared.subjects ?? [])) {
      problems.push(
        finding(
          'streams',
          'STREAM_SUBJECTS_MISMATCH',
          'error',
          `stream ${name} captures ${JSON.stringify(actual.subjects)}, not ${JSON.stringify(declared.subjects)}`,
          { stream: name, actual: actual.subjects, declared: declared.subjects },
        ),
      );
    }
    if (actual.retention !== declared.retention) {
      problems.push(
        finding('streams', 'STREAM_RETENTION_MISMATCH', 'error', `stream ${name} has ${actual.retention} retention, not ${declared.retention}: recreate it`, {
          stream: name,
          actual: actual.retention,
          declared: declared.retention,
        }),
      );
    }
    if (actual.storage !== declared.storage) {
      problems.push(
        finding('streams', 'STREAM_STORAGE_MISMATCH', 'error', `stream ${name} is stored in ${actual.storage}, not ${declared.storage}`, {
          stream: name,
          actual: actual.storage,
          declared: declared.storage,
        }),
      );
    }
    if (actual.num_replicas !== declared.num_replicas) {
      problems.push(
        finding(
          'streams',
          'STREAM_REPLICAS_MISMATCH',
          'warning',
          `stream ${name} has ${actual.num_replicas} replicas, BC_STREAM_REPLICAS says ${declared.num_replicas}`,
          { stream: name, actual: actual.num_replicas, declared: declared.num_replicas },
        ),
      );
    }
    const drifted = (['duplicate_window', 'max_age', 'allow_direct', 'discard', 'max_msgs', 'max_bytes'] as const).filter(
      (key) => JSON.stringify(actual[key]) !== JSON.stringify(declared[key]),
    );
    if (drifted.length > 0) {
      problems.push(
        finding(
          'streams',
          'STREAM_SETTINGS_DRIFT',
          'warning',
          `stream ${name} differs from its declaration in ${drifted.join(', ')} (the next start restores them)`,
          { stream: name, settings: drifted },
        ),
      );
    }
  }
  // The buckets (lease KV, blob object store) are replicated like the streams.
  for (const bucket of Object.values(Buckets)) {
    const name = bucketStream(bucket);
    const info: StreamInfo | undefined = await jsm.streams.info(name).catch(() => undefined);
    if (!info)
      problems.push(
        finding('streams', 'STREAM_MISSING', 'error', `bucket stream ${name} does not exist (every control-plane process creates it at start)`, {
          stream: name,
        }),
      );
    else if (info.config.num_replicas !== config.streamReplicas) {
      problems.push(
        finding(
          'streams',
          'STREAM_REPLICAS_MISMATCH',
          'warning',
          `bucket stream ${name} has ${info.config.num_replicas} replicas, BC_STREAM_REPLICAS says ${config.streamReplicas}`,
          { stream: name, actual: info.config.num_replicas, declared: config.streamReplicas },
        ),
      );
    }
  }
  findings.push(...(problems.length > 0 ? problems : [finding('streams', 'STREAMS_OK', 'info', `${declaredStreams(config).length} streams as declared`)]));
  return { findings, jsm };
}

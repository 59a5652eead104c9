import { setTimeout as sleep } from 'node:timers/promises';
import { jetstreamManager } from '@nats-io/jetstream';
import { describe, expect, it } from 'vitest';
import { Streams } from '../../schemas/subjects.ts';
import { openLeaseBucket, readLease } from '../../services/platform/lease/leaderLease.ts';
import { connectNats } from '../../services/platform/nats/connect.ts';
import { ORCHESTRATOR_DURABLE } from '../../services/processes/orchestrator/orchestrator.ts';
import { VPS_RECONCILER_DURABLE } from '../../services/processes/vpsReconciler/reconciler.ts';
import { startTestNats, tempDir } from '../support/natsServer.ts';
import { startServeProcess } from '../support/serveProcess.ts';

describe('a leased service whose event loop ends', () => {
  it('gives its lease up and starts afresh with its durable back (regression: the orchestrator stayed up and idle)', { timeout: 120_000 }, async () => {
    await using nats = await startTestNats();
    using dir = tempDir('bc-loss-');
    const env = { BC_NATS_URL: nats.url, BC_NATS_AUTH: 'none', BC_DATA_DIR: dir.path, BC_LEASE_MS: '1000' };
    const nc = await connectNats(nats.url, 'test');
    try {
      const jsm = await jetstreamManager(nc);
      const kv = await openLeaseBucket(nc);
      const until = async (what: () => Promise<boolean>, label: string, output: () => string) => {
        for (let i = 0; !(await what()); i++) {
          if (i > 400) throw new Error(`${label}:\n${output().slice(-3000)}`);
          await sleep(50);
        }
      };
      for (const [service, durable] of [
        ['workflow-orchestrator', ORCHESTRATOR_DURABLE],
        ['vps-reconciler', VPS_RECONCILER_DURABLE],
      ] as const) {
        await using proc = await startServeProcess([service], env);
        const durableExists = () =>
          jsm.consumers.info(Streams.events.name, durable).then(
            () => true,
            () => false,
          );
        await until(durableExists, `${service} made no durable`, proc.output);
        const first = (await readLease(kv, service))!.term;
        await jsm.consumers.delete(Streams.events.name, durable);
        // The same process takes a new term and consumes again: nothing left up and idle.
        await until(async () => ((await readLease(kv, service))?.term ?? 0) > first && (await durableExists()), `${service} did not start afresh`, proc.output);
        expect(proc.exitCode).toBeNull();
        expect(proc.output()).toContain('the led service failed; giving the lease up');
      }
    } finally {
      await nc.close();
    }
  });
});

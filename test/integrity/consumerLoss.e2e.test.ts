import { setTimeout as sleep } from 'node:timers/promises';
import { jetstreamManager } from '@nats-io/jetstream';
import { describe, expect, it } from 'vitest';
import { Streams } from '../../schemas/subjects.ts';
import { connectNats } from '../../services/platform/nats/connect.ts';
import { ORCHESTRATOR_DURABLE } from '../../services/workflow/orchestrator.ts';
import { VPS_RECONCILER_DURABLE } from '../../services/vps/reconciler/reconciler.ts';
import { startTestNats, tempDir } from '../support/natsServer.ts';
import { startServeProcess } from '../support/serveProcess.ts';

describe('a process whose event loop ends', () => {
  it('exits non-zero, so its supervisor restarts it (regression: the orchestrator stayed up and idle)', { timeout: 120_000 }, async () => {
    await using nats = await startTestNats();
    using dir = tempDir('bc-loss-');
    const env = { BC_NATS_URL: nats.url, BC_NATS_AUTH: 'none', BC_DATA_DIR: dir.path };
    const nc = await connectNats(nats.url, 'test');
    try {
      const jsm = await jetstreamManager(nc);
      for (const [service, durable] of [['workflow-orchestrator', ORCHESTRATOR_DURABLE], ['vps-reconciler', VPS_RECONCILER_DURABLE]] as const) {
        await using proc = await startServeProcess([service], env);
        expect(proc.exitCode).toBeNull();
        await jsm.consumers.delete(Streams.events.name, durable);
        for (let i = 0; proc.exitCode === null && i < 200; i++) await sleep(50);
        expect(proc.exitCode, `${service}:\n${proc.output().slice(-2000)}`).toBe(1);
      }
    } finally {
      await nc.close();
    }
  });
});

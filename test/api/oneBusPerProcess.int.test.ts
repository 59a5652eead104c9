import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { allCommands } from '../../services/api/commandCatalog.ts';
import { sendCommand } from '../../services/platform/commands/sendCommand.ts';
import { CommandBus } from '../../services/platform/commands/commandBus.ts';
import { natsCommandChannel, ProcessCommandChannel } from '../../services/platform/commands/commandChannel.ts';
import type { Runtime } from '../../services/stack/runtime.ts';
import { serviceCatalog } from '../../services/stack/serviceCatalog.ts';
import { startBackbone } from '../support/backboneFixture.ts';
import { freePort } from '../support/freePort.ts';

describe('one command bus per process', () => {
  it('serialises commands on one aggregate sent through HTTP and NATS to the same process (regression: one bus per entry point raced)', async () => {
    await using backbone = await startBackbone({ projectors: false });
    const httpPort = await freePort();
    const config = { ...backbone.config, httpPort, httpHost: '127.0.0.1', apiAuth: 'off' as const, commandRetries: 0 };
    // Every append waits a while and is recorded with the sequence it expects: two commands decided on the same
    // state would both expect it, and the second would conflict (no retries here).
    const appends: { subject: string; expectedSeq: number; seq?: number }[] = [];
    const append = backbone.store.append.bind(backbone.store);
    backbone.store.append = async (subject, batch, options) => {
      const entry: (typeof appends)[number] = { subject, expectedSeq: options.expectedSeq };
      appends.push(entry);
      await sleep(150);
      const ack = await append(subject, batch, options);
      entry.seq = ack.seq;
      return ack;
    };
    const runtime: Runtime = {
      config,
      nc: backbone.nc,
      store: backbone.store,
      log: backbone.log,
      bus: new CommandBus(backbone.store, allCommands, { retries: 0 }),
      commands: new ProcessCommandChannel(natsCommandChannel(backbone.nc)),
    };
    const services = [await serviceCatalog.commands!(runtime), await serviceCatalog.api!(runtime)];
    try {
      await runtime.bus.execute({ name: 'vps.createTenant', payload: { tenantId: 'acme', name: 'Acme' }, actor: 'test' });
      const quota = (instances: number) => ({ tenantId: 'acme', instances, vcpus: 8, memoryMib: 8_192, diskGib: 100 });
      const [overHttp, overNats] = await Promise.all([
        fetch(`http://127.0.0.1:${httpPort}/v1/commands/vps.setQuota`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(quota(1)),
        }),
        sendCommand(backbone.nc, 'vps.setQuota', quota(2)),
      ]);
      expect(overHttp.status).toBe(201);
      expect(overNats.events).toHaveLength(1);
      const onTenant = appends.filter((a) => a.subject.endsWith('.tenant.acme'));
      expect(onTenant).toHaveLength(3);
      // Each decision saw the append before it: the second quota waited for the first on the process's one bus.
      expect(onTenant[1]!.expectedSeq).toBe(onTenant[0]!.seq);
      expect(onTenant[2]!.expectedSeq).toBe(onTenant[1]!.seq);
    } finally {
      for (const s of services.reverse()) await s.stop();
    }
  });

  it('keeps who may send what at the edge: no HTTP route for an edge command, no NATS answer for an agent command', async () => {
    await using backbone = await startBackbone({ projectors: false });
    const httpPort = await freePort();
    const config = { ...backbone.config, httpPort, httpHost: '127.0.0.1', apiAuth: 'off' as const };
    const runtime: Runtime = {
      config,
      nc: backbone.nc,
      store: backbone.store,
      log: backbone.log,
      bus: backbone.bus,
      commands: new ProcessCommandChannel(natsCommandChannel(backbone.nc)),
    };
    const services = [await serviceCatalog.commands!(runtime), await serviceCatalog.api!(runtime)];
    try {
      const put = await fetch(`http://127.0.0.1:${httpPort}/v1/commands/secrets.put`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      });
      expect(((await put.json()) as { code: string }).code).toBe('UNKNOWN_COMMAND');
      await expect(sendCommand(backbone.nc, 'agent.register', {})).rejects.toMatchObject({ code: 'UNKNOWN_COMMAND' });
      await expect(sendCommand(backbone.nc, 'secrets.put', {})).rejects.toMatchObject({ code: 'COMMAND_NOT_SERVED_OVER_NATS' });
    } finally {
      for (const s of services.reverse()) await s.stop();
    }
  });
});

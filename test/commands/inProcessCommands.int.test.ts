import { describe, expect, it } from 'vitest';
import { natsCommandChannel, ProcessCommandChannel } from '../../services/platform/commands/commandChannel.ts';
import type { Runtime } from '../../services/stack/runtime.ts';
import { serviceCatalog } from '../../services/stack/serviceCatalog.ts';
import { startBackbone } from '../support/backboneFixture.ts';

describe("a process's own engine commands (BC_PROCESS_LAYOUT=compact)", () => {
  it('are decided by its commands service without a NATS request, through the same checks, and go back to NATS when it stops', async () => {
    await using backbone = await startBackbone({ projectors: false });
    const { nc, store, log, bus, config } = backbone;
    const runtime: Runtime = { config, nc, store, log, bus, commands: new ProcessCommandChannel(natsCommandChannel(nc)) };
    const requests: string[] = [];
    const spies = ['bc.cmd.>', 'bc.cmdp.>'].map((subject) => nc.subscribe(subject, { callback: (_err, msg) => void requests.push(msg.subject) }));
    const service = await serviceCatalog.commands!(runtime);
    let stopped = false;
    try {
      await nc.flush();
      const result = await runtime.commands.send('site.create', { siteId: 'dc1', name: 'DC 1' }, { commandId: 'local-site-1', actor: 'workflow-orchestrator' });
      expect(result.events.map((e) => e.type)).toEqual(['SiteCreated']);
      const stored = await store.lastEntry('bc.evt.site.site.dc1');
      expect(stored?.held === false && stored.entry.batch?.events[0]?.metadata).toMatchObject({ actor: 'workflow-orchestrator', commandId: 'local-site-1' });
      // A domain refusal keeps its code, as it would coming back in a reply.
      await expect(runtime.commands.send('site.create', { siteId: 'dc1', name: 'Other' }, { commandId: 'local-site-2' })).rejects.toMatchObject({
        code: 'ALREADY_EXISTS',
      });
      // What the responder refuses is refused here too: commands it does not serve, and credential commands.
      await expect(runtime.commands.send('agent.register', {}, {})).rejects.toMatchObject({ code: 'UNKNOWN_COMMAND' });
      await expect(runtime.commands.send('secrets.put', {}, {})).rejects.toMatchObject({ code: 'COMMAND_NOT_SERVED_OVER_NATS' });
      // The lease fence: a stamp of a lease nobody holds is refused before anything is decided.
      await expect(
        runtime.commands.send('site.create', { siteId: 'dc2', name: 'DC 2' }, { commandId: 'local-site-3', lease: 'workflow-orchestrator/7' }),
      ).rejects.toMatchObject({ code: 'LEASE_SUPERSEDED' });
      expect(await store.lastSequence('bc.evt.site.site.dc2')).toBe(0);
      await nc.flush();
      expect(requests).toEqual([]);

      for (const spy of spies) spy.unsubscribe();
      await service.stop();
      stopped = true;
      // Without a commands service in the process the channel is NATS again, where nobody answers now.
      await expect(runtime.commands.send('site.create', { siteId: 'dc3', name: 'DC 3' }, { commandId: 'local-site-4' })).rejects.toMatchObject({
        code: 'UNAVAILABLE',
        message: expect.stringContaining('no answer to site.create on bc.cmd.site.create'),
      });
    } finally {
      for (const spy of spies) spy.unsubscribe();
      if (!stopped) await service.stop();
    }
  });
});

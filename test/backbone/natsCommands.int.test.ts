import { describe, expect, it } from 'vitest';
import { sendCommand } from '../../services/platform/commands/sendCommand.ts';
import { serveCommands } from '../../services/commands/commandResponder.ts';
import { allCommands, inProcessOnlyCommandNames } from '../../services/api/commandCatalog.ts';
import { Subjects } from '../../schemas/subjects.ts';
import { startBackbone } from '../support/backboneFixture.ts';

describe('NATS command subjects', () => {
  it('answer a command over request-reply with the same result shape as HTTP', async () => {
    await using env = await startBackbone({ projectors: false });
    const sub = serveCommands(env.nc, env.bus, env.log);
    const site = await sendCommand(env.nc, 'site.create', { siteId: 'dc1', name: 'DC 1' }, { commandId: 'nats-site-dc1' });
    expect(site).toMatchObject({ commandId: 'nats-site-dc1', aggregate: { type: 'site.site', id: 'dc1' }, duplicate: false });
    const again = await sendCommand(env.nc, 'site.create', { siteId: 'dc1', name: 'DC 1' }, { commandId: 'nats-site-dc1' });
    expect(again).toMatchObject({ seq: site.seq, duplicate: true });
    sub.unsubscribe();
  });

  it('refuse bad input with stable codes and append nothing', async () => {
    await using env = await startBackbone({ projectors: false });
    const sub = serveCommands(env.nc, env.bus, env.log);
    await expect(sendCommand(env.nc, 'site.create', { siteId: 'dc1' })).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
    await expect(sendCommand(env.nc, 'metal.explode', {})).rejects.toMatchObject({ code: 'UNKNOWN_COMMAND' });
    const raw = await env.nc.request(Subjects.command('site.create'), '{"siteId":', { timeout: 5_000 });
    expect(raw.headers?.get('Bc-Error-Code')).toBe('MALFORMED_JSON');
    expect(raw.json()).toMatchObject({ ok: false, error: { code: 'MALFORMED_JSON', status: 400 } });
    expect(await env.store.streamLastSequence()).toBe(0);
    sub.unsubscribe();
  });

  it('never run a command that mints or holds credentials, even on a bus that has it', async () => {
    await using env = await startBackbone({ projectors: false });
    const sub = serveCommands(env.nc, env.bus, env.log);
    const names = allCommands.map((c) => c.name).filter((name) => inProcessOnlyCommandNames.has(name));
    expect(names).toEqual(
      expect.arrayContaining([
        'auth.createToken',
        'auth.revokeToken',
        'secrets.put',
        'secrets.delete',
        'pki.createJoinToken',
        'pki.useJoinToken',
        'pki.setApprovers',
        'siteTokens.create',
      ]),
    );
    for (const name of names) await expect(sendCommand(env.nc, name, {})).rejects.toMatchObject({ code: 'COMMAND_NOT_SERVED_OVER_NATS' });
    // The agents' own command stays served.
    await expect(sendCommand(env.nc, 'agent.register', {})).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
    expect(await env.store.streamLastSequence()).toBe(0);
    sub.unsubscribe();
  });
});

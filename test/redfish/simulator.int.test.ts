import { describe, expect, it } from 'vitest';

import { PASSWORD, simulate, trees, USER } from './harness.ts';

const basic = { Authorization: `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}` };

async function getJson(url: string, headers: Record<string, string> = basic) {
  const res = await fetch(url, { headers });
  return { status: res.status, etag: res.headers.get('etag'), body: (await res.json()) as Record<string, any> };
}

describe('BMC simulator on hpe-ilo5-dl325: URI quirks', () => {
  it('resolves the lower-case, trailing-slash BIOS links the tree itself uses', async () => {
    const sim = await simulate('hpe-ilo5-dl325');
    const system = await getJson(`${sim.url}/redfish/v1/Systems/1`);
    expect(system.body.Bios['@odata.id']).toBe('/redfish/v1/systems/1/bios');
    const bios = await getJson(`${sim.url}${system.body.Bios['@odata.id']}`);
    expect(bios.status).toBe(200);
    const settingsUri = bios.body['@Redfish.Settings'].SettingsObject['@odata.id'];
    expect(settingsUri).toBe('/redfish/v1/systems/1/bios/settings/');
    expect((await getJson(`${sim.url}${settingsUri}`)).body.Name).toBe('BIOS Pending Settings');
  });

  it('matches path segments case-insensitively and ignores trailing slashes', async () => {
    const sim = await simulate('hpe-ilo5-dl325');
    for (const path of ['/redfish/v1/SYSTEMS/1/BIOS/SETTINGS', '/redfish/v1/systems/1/Bios/Settings///', '/Redfish/V1/Systems/1/']) {
      expect((await getJson(`${sim.url}${path}`)).status, path).toBe(200);
    }
  });

  it('answers 404 with a Redfish error body for a missing resource', async () => {
    const sim = await simulate('hpe-ilo5-dl325');
    const res = await getJson(`${sim.url}/redfish/v1/Systems/99`);
    expect(res.status).toBe(404);
    expect(res.body.error['@Message.ExtendedInfo'][0].MessageId).toMatch(/ResourceNotFound$/);
  });
});

describe.each(trees)('BMC simulator on $tree', (facts) => {
  it('serves the service root without credentials but nothing else', async () => {
    const sim = await simulate(facts.tree);
    expect((await getJson(`${sim.url}/redfish/v1/`, {})).status).toBe(200);
    const denied = await getJson(`${sim.url}${facts.systemUri}`, {});
    expect(denied.status).toBe(401);
    expect(denied.body.error.code).toMatch(/NoValidSession$/);
    const wrong = { Authorization: `Basic ${Buffer.from(`${USER}:nope`).toString('base64')}` };
    expect((await getJson(`${sim.url}${facts.systemUri}`, wrong)).status).toBe(401);
  });

  it('creates and deletes SessionService sessions', async () => {
    const sim = await simulate(facts.tree);
    const login = await fetch(`${sim.url}/redfish/v1/SessionService/Sessions`, {
      method: 'POST',
      body: JSON.stringify({ UserName: USER, Password: PASSWORD }),
    });
    expect(login.status).toBe(201);
    const token = login.headers.get('x-auth-token') ?? '';
    const location = login.headers.get('location') ?? '';
    expect(token).not.toBe('');
    expect((await getJson(`${sim.url}${facts.systemUri}`, { 'X-Auth-Token': token })).status).toBe(200);
    expect((await fetch(`${sim.url}${location}`, { method: 'DELETE', headers: { 'X-Auth-Token': token } })).status).toBe(204);
    expect((await getJson(`${sim.url}${facts.systemUri}`, { 'X-Auth-Token': token })).status).toBe(401);
    const badLogin = await fetch(`${sim.url}/redfish/v1/SessionService/Sessions`, {
      method: 'POST',
      body: JSON.stringify({ UserName: USER, Password: 'wrong' }),
    });
    expect(badLogin.status).toBe(401);
  });

  it('refuses a ResetType the tree does not allow with ActionParameterNotSupported', async () => {
    const sim = await simulate(facts.tree);
    // Neither tree lists PowerCycle.
    const res = await fetch(`${sim.url}${facts.resetUri}`, { method: 'POST', headers: basic, body: JSON.stringify({ ResetType: 'PowerCycle' }) });
    expect(res.status).toBe(400);
    expect(JSON.stringify(await res.json())).toContain('ActionParameterNotSupported');
    expect(sim.state.powerState).toBe('On');
  });

  it('honours If-Match on PATCH and changes the ETag after a write', async () => {
    const sim = await simulate(facts.tree);
    const before = await getJson(`${sim.url}${facts.systemUri}`);
    const patch = (etag: string) =>
      fetch(`${sim.url}${facts.systemUri}`, {
        method: 'PATCH',
        headers: { ...basic, 'If-Match': etag },
        body: JSON.stringify({ Boot: { BootSourceOverrideTarget: 'Pxe', BootSourceOverrideEnabled: 'Once' } }),
      });
    expect((await patch('W/"not-the-etag"')).status).toBe(412);
    expect((await patch(before.etag ?? '')).status).toBe(200);
    const after = await getJson(`${sim.url}${facts.systemUri}`);
    expect(after.etag).not.toBe(before.etag);
    expect(after.body.Boot.BootSourceOverrideTarget).toBe('Pxe');
  });

  it('validates the boot override target against the tree', async () => {
    const sim = await simulate(facts.tree);
    const res = await fetch(`${sim.url}${facts.systemUri}`, {
      method: 'PATCH',
      headers: basic,
      body: JSON.stringify({ Boot: { BootSourceOverrideTarget: 'Floppy', BootSourceOverrideEnabled: 'Once' } }),
    });
    expect(res.status).toBe(400);
  });

  it('shows the old PowerState until the power delay has passed', async () => {
    const sim = await simulate(facts.tree, { powerDelayMs: 80 });
    const res = await fetch(`${sim.url}${facts.resetUri}`, { method: 'POST', headers: basic, body: JSON.stringify({ ResetType: 'ForceOff' }) });
    expect(res.status).toBe(200);
    expect((await getJson(`${sim.url}${facts.systemUri}`)).body.PowerState).toBe('On');
    await new Promise((resolve) => setTimeout(resolve, 120));
    expect((await getJson(`${sim.url}${facts.systemUri}`)).body.PowerState).toBe('Off');
  });

  it('reports PoweringOn through a restart, so the end of a reset is observable', async () => {
    const sim = await simulate(facts.tree, { powerDelayMs: 80 });
    const res = await fetch(`${sim.url}${facts.resetUri}`, { method: 'POST', headers: basic, body: JSON.stringify({ ResetType: 'ForceRestart' }) });
    expect(res.status).toBe(200);
    expect((await getJson(`${sim.url}${facts.systemUri}`)).body.PowerState).toBe('PoweringOn');
    expect(sim.state.boots).toHaveLength(0);
    await new Promise((resolve) => setTimeout(resolve, 120));
    expect((await getJson(`${sim.url}${facts.systemUri}`)).body.PowerState).toBe('On');
    expect(sim.state.boots).toHaveLength(1);
  });
});

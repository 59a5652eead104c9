import { describe, expect, it } from 'vitest';

import { isRedfishError } from '../../daemon/redfish/index.ts';
import { clientFor, failureOf, PASSWORD, requestsTo, simulate, trees, USER } from './harness.ts';

describe.each(trees)('transient answers on $tree', (facts) => {
  it('sends a request again after a 503, and every operation completes', async () => {
    const sim = await simulate(facts.tree, { dialect: { throttle: { status: 503, every: 2, retryAfterSeconds: 0 } }, powerDelayMs: 5 });
    expect(await clientFor(sim).setPower('off')).toMatchObject({ after: 'Off' });
    expect(sim.state.powerState).toBe('Off');
    const statuses = sim.requestLog.map((r) => r.status);
    expect(statuses.filter((s) => s === 503).length).toBeGreaterThan(1);
    // A throttled reset is not acted on, so exactly one reset took effect however often it was sent.
    expect(requestsTo(sim, 'POST', facts.resetUri).filter((r) => r.status === 200)).toHaveLength(1);
  });

  it('waits the Retry-After a 429 asks for before sending again', async () => {
    const sim = await simulate(facts.tree, { dialect: { throttle: { status: 429, every: 2, retryAfterSeconds: 1 } } });
    await clientFor(sim).getPowerState();
    const throttled = sim.requestLog.findIndex((r) => r.status === 429);
    expect(throttled).toBeGreaterThanOrEqual(0);
    const retry = sim.requestLog[throttled + 1]!;
    expect(retry.path).toBe(sim.requestLog[throttled]!.path);
    expect(retry.time - sim.requestLog[throttled]!.time).toBeGreaterThanOrEqual(950);
  });

  it('gives up after the bounded retries with REDFISH_UNAVAILABLE', async () => {
    const sim = await simulate(facts.tree, { dialect: { throttle: { status: 503, every: 1, retryAfterSeconds: 0 } } });
    const error = await failureOf(clientFor(sim, { auth: 'basic', timing: { transientRetries: 2 } }).getPowerState());
    expect(isRedfishError(error, 'REDFISH_UNAVAILABLE')).toBe(true);
    expect(sim.requestLog.map((r) => r.status)).toEqual([503, 503, 503]);
  });
});

describe.each(trees)('deferred actions (202 and a task) on $tree', (facts) => {
  it('follows the task monitor of every action to its end', async () => {
    const sim = await simulate(facts.tree, { dialect: { asyncActions: true }, taskDurationMs: 40, powerDelayMs: 5, mediaDelayMs: 5 });
    const client = clientFor(sim);
    expect(await client.setPower('off')).toMatchObject({ after: 'Off' });
    await client.insertMedia('http://127.0.0.1:9/a.iso');
    expect(sim.insertedMedia()).toBe('http://127.0.0.1:9/a.iso');
    const accepted = sim.requestLog.filter((r) => r.method === 'POST' && r.status === 202);
    expect(accepted.length).toBeGreaterThanOrEqual(facts.mediaBy === 'actions' ? 2 : 1);
    if (facts.hasVolumes) {
      const created = await client.createVolume({ raidType: 'RAID1', name: 'deferred-vol', storageUri: `${facts.systemUri}/Storage/RAIDIntegrated` });
      expect(created).toMatchObject({ name: 'deferred-vol', raidType: 'RAID1' });
      await client.deleteVolume(created.uri);
      expect((await client.listVolumes()).some((v) => v.name === 'deferred-vol')).toBe(false);
    }
  });

  it('fails when a deferred action ends in Exception', async () => {
    const sim = await simulate(facts.tree, { dialect: { asyncActions: true }, taskDurationMs: 20 });
    // On is refused for a running machine: the task ends in Exception, and the client says so.
    const reset = sim.resource(facts.systemUri) as { Actions: Record<string, { target: string }> };
    const basic = `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`;
    const res = await fetch(`${sim.url}${reset.Actions['#ComputerSystem.Reset']!.target}`, {
      method: 'POST',
      headers: { Authorization: basic },
      body: JSON.stringify({ ResetType: 'On' }),
    });
    expect(res.status).toBe(202);
    const task = res.headers.get('location')!;
    await expect
      .poll(async () => ((await (await fetch(`${sim.url}${task}`, { headers: { Authorization: basic } })).json()) as { TaskState: string }).TaskState)
      .toBe('Exception');
  });
});

describe.each(trees)('Allow headers (RFC 9110) on $tree', (facts) => {
  const basic = { Authorization: `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}` };

  it('names the methods of every resource, and of a 405', async () => {
    const sim = await simulate(facts.tree);
    const allow = async (path: string, method = 'GET') => {
      const res = await fetch(`${sim.url}${path}`, { method, headers: basic });
      return { status: res.status, allow: res.headers.get('allow') };
    };
    expect(await allow(facts.systemUri)).toEqual({ status: 200, allow: 'GET, HEAD, PATCH' });
    expect(await allow('/redfish/v1/SessionService/Sessions')).toEqual({ status: 200, allow: 'GET, HEAD, POST' });
    expect(await allow('/redfish/v1/')).toEqual({ status: 200, allow: 'GET, HEAD' });
    expect(await allow(facts.resetUri)).toEqual({ status: 405, allow: 'POST' });
    expect(await allow('/redfish/v1/Chassis', 'PATCH')).toEqual({ status: 405, allow: 'GET, HEAD' });
    expect(await allow(facts.cdMediaUri)).toMatchObject({ allow: 'GET, HEAD, PATCH' });
    if (facts.hasVolumes) expect(await allow(`${facts.systemUri}/Storage/RAIDIntegrated/Volumes`)).toEqual({ status: 200, allow: 'GET, HEAD, POST' });
  });
});

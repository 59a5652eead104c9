import { describe, expect, it } from 'vitest';

import { isRedfishError } from '../../daemon/redfish/index.ts';
import { clientFor, failureOf, PASSWORD, requestsTo, simulate, trees } from './harness.ts';

const sessions = '/redfish/v1/SessionService/Sessions';
const authOf = (sim: Awaited<ReturnType<typeof simulate>>) => new Set(sim.requestLog.filter((r) => r.auth !== 'none').map((r) => r.auth));

describe.each(trees)('authentication (auto) on $tree', (facts) => {
  it('uses a session when the BMC offers a SessionService', async () => {
    const sim = await simulate(facts.tree);
    await clientFor(sim, { auth: undefined }).getPowerState();
    expect(requestsTo(sim, 'POST', sessions)).toHaveLength(1);
    expect(authOf(sim)).toEqual(new Set(['session']));
  });

  it('uses Basic without trying a login when the BMC has no SessionService', async () => {
    const sim = await simulate(facts.tree, { dialect: 'no-sessions' });
    expect((sim.resource('/redfish/v1/') as Record<string, unknown>).SessionService).toBeUndefined();
    expect(await clientFor(sim, { auth: 'auto' }).getPowerState()).toBe('On');
    expect(sim.requestLog.filter((r) => r.method === 'POST')).toEqual([]);
    expect(authOf(sim)).toEqual(new Set(['basic']));
  });

  it('falls back to Basic when the session login answers 401', async () => {
    const sim = await simulate(facts.tree, { dialect: { sessions: 'refused' } });
    expect(await clientFor(sim, { auth: 'auto' }).getPowerState()).toBe('On');
    expect(requestsTo(sim, 'POST', sessions).map((r) => r.status)).toEqual([401]);
    expect(authOf(sim)).toEqual(new Set(['basic']));
  });

  it('falls back to Basic when the login answers 404 (a SessionService listed but not served)', async () => {
    const sim = await simulate(facts.tree, { dialect: { sessions: 'notFound' } });
    expect(await clientFor(sim, { auth: 'auto' }).getPowerState()).toBe('On');
    expect(requestsTo(sim, 'POST', sessions).map((r) => r.status)).toEqual([404]);
    expect(authOf(sim)).toEqual(new Set(['basic']));
  });

  it('does not fall back when the enrolment forces sessions, nor log in when it forces Basic', async () => {
    const refusing = await simulate(facts.tree, { dialect: { sessions: 'refused' } });
    expect(isRedfishError(await failureOf(clientFor(refusing, { auth: 'session' }).getPowerState()), 'REDFISH_AUTH')).toBe(true);
    expect(authOf(refusing)).toEqual(new Set());
    const offering = await simulate(facts.tree);
    await clientFor(offering, { auth: 'basic' }).getPowerState();
    expect(requestsTo(offering, 'POST', sessions)).toEqual([]);
  });

  it('reports REDFISH_AUTH when Basic is refused too, without leaking the password', async () => {
    const sim = await simulate(facts.tree, { dialect: { sessions: 'refused' } });
    const error = await failureOf(clientFor(sim, { auth: 'auto', password: `${PASSWORD}-wrong` }).getPowerState());
    expect(isRedfishError(error, 'REDFISH_AUTH')).toBe(true);
    expect((error as Error).message).not.toContain(PASSWORD);
  });
});

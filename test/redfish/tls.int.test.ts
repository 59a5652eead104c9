import { describe, expect, it } from 'vitest';

import { isRedfishError } from '../../daemon/redfish/index.ts';
import { clientFor, failureOf, simulate, trees } from './harness.ts';

/**
 * SPKI pin of daemon/simulator/bmc/certs/bmc-sim-cert.pem, computed independently with:
 * openssl x509 -in bmc-sim-cert.pem -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64
 */
const simulatorPin = 'BOqHcUcNVQ1+5dBta2rpwsIGC93EHtJZE//TXk+6Rfk=';
const otherPin = 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=';

describe.each(trees)('TLS with a pinned certificate on $tree', (facts) => {
  it('connects when the SPKI pin matches', async () => {
    const sim = await simulate(facts.tree, { tls: true });
    expect(sim.url.startsWith('https://127.0.0.1:')).toBe(true);
    expect(sim.spkiSha256).toBe(simulatorPin);
    const client = clientFor(sim, { tls: { pinnedSpkiSha256: simulatorPin }, auth: 'session' });
    expect(await client.getPowerState()).toBe('On');
  });

  it('refuses a mismatching pin before sending any request', async () => {
    const sim = await simulate(facts.tree, { tls: true });
    const error = await failureOf(clientFor(sim, { tls: { pinnedSpkiSha256: otherPin } }).getPowerState());
    expect(isRedfishError(error, 'REDFISH_TLS_PIN_MISMATCH')).toBe(true);
    expect(sim.requestLog).toEqual([]);
  });

  it('refuses the self-signed certificate when there is no pin', async () => {
    const sim = await simulate(facts.tree, { tls: true });
    const error = await failureOf(clientFor(sim).getPowerState());
    expect(isRedfishError(error, 'REDFISH_TLS_PIN_MISMATCH')).toBe(true);
    expect(sim.requestLog).toEqual([]);
  });
});

describe('client configuration', () => {
  it('rejects a pin on a plain-HTTP base URL', async () => {
    const sim = await simulate('dmtf-public-tower');
    expect(() => clientFor(sim, { tls: { pinnedSpkiSha256: simulatorPin } })).toThrow(/https/);
  });
});

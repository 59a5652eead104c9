import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

import { isRedfishError } from '../../daemon/redfish/index.ts';
import { clientFor, failureOf, simulate, trees } from './harness.ts';

/**
 * SPKI pin of daemon/simulator/bmc/certs/bmc-sim-cert.pem, computed independently with:
 * openssl x509 -in bmc-sim-cert.pem -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64
 */
const simulatorPin = 'BOqHcUcNVQ1+5dBta2rpwsIGC93EHtJZE//TXk+6Rfk=';
const otherPin = 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=';
// Self-signed with CA:TRUE and an IP SAN for 127.0.0.1: it can be its own CA bundle.
const simulatorCa = readFileSync(new URL('../../daemon/simulator/bmc/certs/bmc-sim-cert.pem', import.meta.url), 'utf8');

describe.each(trees)('TLS on $tree', (facts) => {
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

  it('refuses the self-signed certificate when there is no pin, CA or insecure option', async () => {
    const sim = await simulate(facts.tree, { tls: true });
    const error = await failureOf(clientFor(sim).getPowerState());
    expect(isRedfishError(error, 'REDFISH_TLS_PIN_MISMATCH')).toBe(true);
    expect(sim.requestLog).toEqual([]);
  });

  it('verifies the chain against a CA bundle', async () => {
    const sim = await simulate(facts.tree, { tls: true });
    expect(await clientFor(sim, { tls: { ca: simulatorCa } }).getPowerState()).toBe('On');
  });

  it('connects to anything in insecure mode', async () => {
    const sim = await simulate(facts.tree, { tls: true });
    expect(await clientFor(sim, { tls: { insecure: true } }).getPowerState()).toBe('On');
  });
});

describe('TLS options with an http address', () => {
  it('follows the BMC redirect to https on the same host and checks the pin there, without credentials on plain http', async () => {
    const sim = await simulate('hpe-ilo5-dl325', { tls: true, dialect: { httpsRedirect: true } });
    expect(sim.redirectUrl).toMatch(/^http:\/\/127\.0\.0\.1:/);
    const client = clientFor(sim, { baseUrl: `${sim.redirectUrl}/redfish/v1/Systems/1`, tls: { pinnedSpkiSha256: simulatorPin }, auth: 'basic' });
    expect(await client.getPowerState()).toBe('On');
    await client.setPower('off');
    // Every request the https BMC saw carried credentials; none had to be redirected twice.
    expect(sim.requestLog.every((r) => r.auth === 'basic')).toBe(true);
    const mismatch = clientFor(sim, { baseUrl: sim.redirectUrl!, tls: { pinnedSpkiSha256: otherPin } });
    expect(isRedfishError(await failureOf(mismatch.getPowerState()), 'REDFISH_TLS_PIN_MISMATCH')).toBe(true);
  });

  it('refuses a BMC that answers over plain http when a pin was given', async () => {
    const sim = await simulate('dmtf-public-tower');
    const error = await failureOf(clientFor(sim, { tls: { pinnedSpkiSha256: simulatorPin }, auth: 'basic' }).getPowerState());
    expect(isRedfishError(error, 'REDFISH_TLS_PIN_MISMATCH')).toBe(true);
    // What went out over plain http carried no credentials.
    expect(sim.requestLog.map((r) => r.auth)).toEqual(['none']);
  });

  it('refuses a redirect to another host (REDFISH_REDIRECT_REFUSED)', async () => {
    const sim = await simulate('dmtf-public-tower', { tls: true, dialect: { httpsRedirect: true } });
    // localhost is the same machine but not the same host name: the client must not follow.
    const error = await failureOf(clientFor(sim, { baseUrl: sim.redirectUrl!.replace('127.0.0.1', 'localhost'), auth: 'basic' }).getPowerState());
    expect(isRedfishError(error, 'REDFISH_REDIRECT_REFUSED')).toBe(true);
    expect(sim.requestLog).toEqual([]);
  });
});

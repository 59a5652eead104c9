import { fc, test } from '@fast-check/vitest';
import { generateKeyPairSync, createPublicKey, type KeyObject } from 'node:crypto';
import protobuf from 'protobufjs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { AgentCommand, AgentCommandKind } from '../../schemas/agent/agentCommand.ts';
import {
  decodeSignedResult,
  keyIdOf,
  signAgentResult,
  verifyAgentResult,
  type AgentResultData,
  type RegisteredAgentKey,
} from '../../schemas/agent/agentResultCodec.ts';

const root = protobuf.loadSync(fileURLToPath(new URL('../../schemas/agent/agentResult.proto', import.meta.url)));
const Signed = root.lookupType('bc.agent.v1.SignedAgentResult');

function keyPair(): { privateKey: KeyObject; publicKeyRaw: Uint8Array; publicKey: string; keyId: string } {
  const { privateKey } = generateKeyPairSync('ed25519');
  const publicKeyRaw = Buffer.from(createPublicKey(privateKey).export({ format: 'jwk' }).x!, 'base64url');
  return { privateKey, publicKeyRaw, publicKey: publicKeyRaw.toString('base64'), keyId: keyIdOf(publicKeyRaw) };
}

const site = keyPair();
const ramdisk = keyPair();
const other = keyPair();

function command(kind: AgentCommandKind, overrides: Partial<AgentCommand> = {}): AgentCommand {
  return {
    commandId: 'wf1-s0-a1',
    kind,
    siteId: 'dc1',
    nodeId: 'r1-n1',
    workflowId: 'wf1',
    stepIndex: 0,
    attempt: 1,
    destructive: false,
    params: {},
    issuedAt: '2026-01-01T00:00:00Z',
    notAfter: '2026-01-01T01:00:00Z',
    nonce: 'bm9uY2Utb2YtdGhlLWNvbW1hbmQ',
    ...overrides,
  };
}

function resultFor(cmd: AgentCommand, agentId: string, overrides: Partial<AgentResultData> = {}): AgentResultData {
  return {
    commandId: cmd.commandId,
    kind: cmd.kind,
    nodeId: cmd.nodeId,
    siteId: cmd.siteId,
    agentId,
    ok: true,
    errorCode: '',
    errorMessage: '',
    payload: { done: true },
    executedAtMs: 1_767_225_600_000,
    commandNonce: cmd.nonce,
    ...overrides,
  };
}

const registry: Record<string, RegisteredAgentKey> = {
  'site-dc1': { keyId: site.keyId, publicKey: site.publicKey, role: 'site', siteId: 'dc1', nodeId: null },
  'ramdisk-r1-n1-aaaaaaaa': { keyId: ramdisk.keyId, publicKey: ramdisk.publicKey, role: 'ramdisk', siteId: 'dc1', nodeId: 'r1-n1' },
  'ramdisk-r1-n2-bbbbbbbb': { keyId: other.keyId, publicKey: other.publicKey, role: 'ramdisk', siteId: 'dc1', nodeId: 'r1-n2' },
  'site-dc2': { keyId: other.keyId, publicKey: other.publicKey, role: 'site', siteId: 'dc2', nodeId: null },
};
const lookup = (agentId: string) => registry[agentId];

describe('agentResultCodec', () => {
  it('keyIdOf is base64url sha256 of the raw key (43 chars, no padding)', () => {
    expect(site.keyId).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(keyIdOf(site.publicKeyRaw)).toBe(site.keyId);
  });

  it('verifyAgentResult accepts a site result signed by the site agent', () => {
    const cmd = command('power.set');
    const verdict = verifyAgentResult(signAgentResult(resultFor(cmd, 'site-dc1'), site), cmd, lookup);
    expect(verdict).toEqual({ ok: true, result: resultFor(cmd, 'site-dc1') });
  });

  it("verifyAgentResult accepts a node result signed by that node's ramdisk", () => {
    const cmd = command('disk.wipe');
    expect(verifyAgentResult(signAgentResult(resultFor(cmd, 'ramdisk-r1-n1-aaaaaaaa'), ramdisk), cmd, lookup).ok).toBe(true);
  });

  it('signAgentResult adds a fresh nonce: the same result never signs the same bytes', () => {
    const cmd = command('power.set');
    const a = decodeSignedResult(signAgentResult(resultFor(cmd, 'site-dc1'), site));
    const b = decodeSignedResult(signAgentResult(resultFor(cmd, 'site-dc1'), site));
    expect(Buffer.from(a.resultBytes).equals(Buffer.from(b.resultBytes))).toBe(false);
    expect(a.result).toEqual(b.result);
  });

  it('verifyAgentResult rejects garbage as MALFORMED', () => {
    expect(verifyAgentResult(new Uint8Array([0xff, 0xff, 0xff]), command('power.set'), lookup)).toEqual({ ok: false, reason: 'MALFORMED' });
    expect(verifyAgentResult(new Uint8Array(), command('power.set'), lookup)).toEqual({ ok: false, reason: 'MALFORMED' });
  });

  it('verifyAgentResult rejects an envelope without signature as UNSIGNED', () => {
    const cmd = command('power.set');
    const { resultBytes, keyId } = decodeSignedResult(signAgentResult(resultFor(cmd, 'site-dc1'), site));
    const unsigned = Signed.encode(Signed.fromObject({ result: resultBytes, keyId })).finish();
    expect(verifyAgentResult(unsigned, cmd, lookup)).toEqual({ ok: false, reason: 'UNSIGNED' });
  });

  it('verifyAgentResult rejects an unregistered agent as UNKNOWN_AGENT', () => {
    const cmd = command('power.set');
    expect(verifyAgentResult(signAgentResult(resultFor(cmd, 'site-nowhere'), site), cmd, lookup)).toEqual({ ok: false, reason: 'UNKNOWN_AGENT' });
  });

  it('verifyAgentResult rejects a result signed by another key as FORGED', () => {
    const cmd = command('power.set');
    expect(verifyAgentResult(signAgentResult(resultFor(cmd, 'site-dc1'), other), cmd, lookup)).toEqual({ ok: false, reason: 'FORGED' });
  });

  it('verifyAgentResult rejects tampered result bytes as FORGED', () => {
    const cmd = command('power.set');
    const signed = decodeSignedResult(signAgentResult(resultFor(cmd, 'site-dc1'), site));
    const tampered = Buffer.from(signed.resultBytes);
    tampered[tampered.length - 1]! ^= 0x01;
    const bytes = Signed.encode(Signed.fromObject({ result: tampered, signature: signed.signature, keyId: signed.keyId })).finish();
    expect(verifyAgentResult(bytes, cmd, lookup)).toEqual({ ok: false, reason: 'FORGED' });
  });

  it('verifyAgentResult rejects a keyId that differs from the registered key as FORGED', () => {
    const cmd = command('power.set');
    const signed = decodeSignedResult(signAgentResult(resultFor(cmd, 'site-dc1'), site));
    const bytes = Signed.encode(Signed.fromObject({ result: signed.resultBytes, signature: signed.signature, keyId: other.keyId })).finish();
    expect(verifyAgentResult(bytes, cmd, lookup)).toEqual({ ok: false, reason: 'FORGED' });
  });

  it.each([
    ['commandId', { commandId: 'wf1-s0-a2' }],
    ['kind', { kind: 'power.set' as const }],
    ['nodeId', { nodeId: 'r1-n9' }],
    ['siteId', { siteId: 'dc9' }],
  ])('verifyAgentResult rejects a result for another %s as MISMATCHED', (_field, other) => {
    const cmd = command('boot.setOnce');
    const replayed = resultFor({ ...cmd, ...other }, 'site-dc1');
    expect(verifyAgentResult(signAgentResult(replayed, site), cmd, lookup)).toEqual({ ok: false, reason: 'MISMATCHED' });
  });

  it('verifyAgentResult rejects a result made for the same command id before the command (another nonce) as MISMATCHED', () => {
    const cmd = command('disk.wipe');
    const early = resultFor(cmd, 'ramdisk-r1-n1-aaaaaaaa', { commandNonce: 'Z3Vlc3NlZC1iZWZvcmUtdGhlLWNvbW1hbmQ' });
    expect(verifyAgentResult(signAgentResult(early, ramdisk), cmd, lookup)).toEqual({ ok: false, reason: 'MISMATCHED' });
  });

  it.each(['disk.wipe', 'image.write'] as const)("verifyAgentResult refuses an installed host's node agent answering %s as NOT_AUTHORISED", (kind) => {
    const cmd = command(kind);
    const nodeAgent = { ...registry['ramdisk-r1-n1-aaaaaaaa']!, role: 'node' as const };
    const verdict = verifyAgentResult(signAgentResult(resultFor(cmd, 'node-r1-n1'), ramdisk), cmd, (id) => (id === 'node-r1-n1' ? nodeAgent : undefined));
    expect(verdict).toEqual({ ok: false, reason: 'NOT_AUTHORISED' });
  });

  it('verifyAgentResult refuses a ramdisk of the node that is not the addressee as NOT_AUTHORISED', () => {
    const cmd = command('disk.wipe', { agentId: 'ramdisk-r1-n1-cccccccc' });
    expect(verifyAgentResult(signAgentResult(resultFor(cmd, 'ramdisk-r1-n1-aaaaaaaa'), ramdisk), cmd, lookup)).toEqual({ ok: false, reason: 'NOT_AUTHORISED' });
    const addressed = command('disk.wipe', { agentId: 'ramdisk-r1-n1-aaaaaaaa' });
    expect(verifyAgentResult(signAgentResult(resultFor(addressed, 'ramdisk-r1-n1-aaaaaaaa'), ramdisk), addressed, lookup).ok).toBe(true);
  });

  it('verifyAgentResult rejects a site agent answering a node kind as NOT_AUTHORISED', () => {
    const cmd = command('image.write');
    expect(verifyAgentResult(signAgentResult(resultFor(cmd, 'site-dc1'), site), cmd, lookup)).toEqual({ ok: false, reason: 'NOT_AUTHORISED' });
  });

  it('verifyAgentResult rejects a ramdisk answering a site kind as NOT_AUTHORISED', () => {
    const cmd = command('power.set');
    expect(verifyAgentResult(signAgentResult(resultFor(cmd, 'ramdisk-r1-n1-aaaaaaaa'), ramdisk), cmd, lookup)).toEqual({ ok: false, reason: 'NOT_AUTHORISED' });
  });

  it("verifyAgentResult rejects a ramdisk answering another node's command as NOT_AUTHORISED", () => {
    const cmd = command('disk.wipe');
    expect(verifyAgentResult(signAgentResult(resultFor(cmd, 'ramdisk-r1-n2-bbbbbbbb'), other), cmd, lookup)).toEqual({ ok: false, reason: 'NOT_AUTHORISED' });
  });

  it("verifyAgentResult rejects another site's agent as NOT_AUTHORISED", () => {
    const cmd = command('power.set');
    expect(verifyAgentResult(signAgentResult(resultFor(cmd, 'site-dc2'), other), cmd, lookup)).toEqual({ ok: false, reason: 'NOT_AUTHORISED' });
  });

  const json = fc.jsonValue().map((v) => JSON.parse(JSON.stringify(v)) as unknown);
  const resultArb = fc.record({
    commandId: fc.stringMatching(/^[a-z0-9][a-z0-9_-]{0,40}$/),
    kind: fc.constantFrom('power.set', 'disk.wipe', 'image.write'),
    nodeId: fc.string(),
    siteId: fc.string(),
    agentId: fc.string(),
    ok: fc.boolean(),
    errorCode: fc.string(),
    errorMessage: fc.string(),
    payload: json,
    executedAtMs: fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
    commandNonce: fc.string(),
  });

  test.prop([resultArb], { numRuns: 200 })('signAgentResult then decodeSignedResult round-trips every result', (result) => {
    const decoded = decodeSignedResult(signAgentResult(result, site));
    expect(decoded.result).toEqual({ ...result, payload: result.payload === undefined ? null : result.payload });
    expect(decoded.keyId).toBe(site.keyId);
    expect(decoded.signature).toHaveLength(64);
  });
});

import { createHash, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { DeliverPolicy, jetstream, type ConsumerMessages } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { AgentCommand } from '../../schemas/agent/agentCommand.ts';
import { keyIdOf, signAgentResult } from '../../schemas/agent/agentResultCodec.ts';
import { Streams, Subjects } from '../../schemas/subjects.ts';
import { ramdiskAgentId, siteAgentId } from '../../schemas/trust/agentIds.ts';
import { sendRegistration } from '../../daemon/agent/registration.ts';

interface Signer {
  privateKey: KeyObject;
  publicKeyRaw: Uint8Array;
  publicKey: string;
}

function newSigner(): Signer {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const raw = Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url');
  return { privateKey, publicKeyRaw: raw, publicKey: raw.toString('base64') };
}

export const fakeInventory = {
  manufacturer: 'Contoso',
  model: 'Fake 1U',
  serial: 'SN-0001',
  productUuid: '4c4c4544-0042-3510-8056-b4c04f563232',
  cpus: { count: 2, model: 'Fake CPU', cores: 32 },
  memoryMiB: 262_144,
  disks: [{ id: 'nvme0', sizeBytes: 1_920_383_410_176, model: 'FakeDisk', serial: 'D1' }],
  nics: [{ id: 'eth0', mac: '52:54:00:aa:bb:01', speedMbps: 25_000 }],
};

/**
 * The inventory of node `nodeId`'s machine: `fakeInventory` with its own SMBIOS UUID, as every real machine has (the
 * orchestrator fails the inspection of a node whose UUID another node holds: `NODE_IDENTITY_CONFLICT`).
 */
export function fakeInventoryOf(nodeId: string): typeof fakeInventory {
  const hex = createHash('sha256').update(`fake-machine:${nodeId}`).digest('hex');
  const productUuid = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
  return { ...fakeInventory, productUuid };
}

/** What a ramdisk reports after zeroing the disk of `fakeInventory` end to end. */
export const fakeWipeReport = {
  method: 'zero',
  disks: fakeInventory.disks.map((d) => ({
    path: `/dev/${d.id}n1`,
    serial: d.serial,
    model: d.model,
    sizeBytes: d.sizeBytes,
    method: 'zero',
    verifiedBytes: d.sizeBytes,
  })),
};

/**
 * A site agent plus the ramdisk agents it "boots" (each node's machine with its own UUID: `fakeInventoryOf`): it consumes every agent command, registers a fresh ramdisk key
 * when a PXE-flagged node is power-cycled, and publishes signed results. `forgeWipe` signs wipe results with an
 * unregistered key; `wipeReport` replaces the wipe's (correctly signed) payload; `delayMs` holds a kind's result back
 * (to stop an executor mid-step); `failKinds` answer `ok: false`, with `failCode` (default DRIVER_ERROR).
 */
export async function startFakeAgent(
  nc: NatsConnection,
  siteId: string,
  options: { forgeWipe?: boolean; wipeReport?: unknown; delayMs?: Partial<Record<string, number>>; failKinds?: string[]; failCode?: string } = {},
) {
  const js = jetstream(nc);
  const site = newSigner();
  await sendRegistration(nc, { agentId: siteAgentId(siteId), role: 'site', siteId, publicKey: site.publicKey });
  const ramdisks = new Map<string, { agentId: string; signer: Signer }>();
  const pxe = new Set<string>();
  const executed = new Map<string, number>();
  const refused: { command: AgentCommand; bytes: Uint8Array; reason: string }[] = [];

  const consumer = await js.consumers.get(Streams.agentCommands.name, { deliver_policy: DeliverPolicy.All });
  const messages: ConsumerMessages = await consumer.consume();
  const execute = async (command: AgentCommand) => {
    executed.set(command.commandId, (executed.get(command.commandId) ?? 0) + 1);
    await sleep(options.delayMs?.[command.kind] ?? 0);
    let signer = site;
    let agentId = siteAgentId(siteId);
    let payload: unknown = {};
    if (command.kind === 'boot.setOnce') pxe.add(command.nodeId);
    if (command.kind === 'power.set' && command.params.action === 'cycle' && pxe.delete(command.nodeId)) {
      const ramdisk = newSigner();
      const rid = ramdiskAgentId(command.nodeId, keyIdOf(ramdisk.publicKeyRaw));
      ramdisks.set(command.nodeId, { agentId: rid, signer: ramdisk });
      await sendRegistration(nc, { agentId: rid, role: 'ramdisk', siteId, nodeId: command.nodeId, publicKey: ramdisk.publicKey });
    }
    if (command.kind === 'inventory.read') payload = fakeInventoryOf(command.nodeId);
    if (['disk.wipe', 'image.write', 'userdata.write'].includes(command.kind)) {
      const ramdisk = ramdisks.get(command.nodeId)!;
      agentId = ramdisk.agentId;
      signer = command.kind === 'disk.wipe' && options.forgeWipe ? newSigner() : ramdisk.signer;
      if (command.kind === 'disk.wipe') payload = options.wipeReport ?? fakeWipeReport;
      if (command.kind === 'image.write') payload = { sha256: command.params.sha256 };
    }
    const ok = !options.failKinds?.includes(command.kind);
    const bytes = signAgentResult(
      {
        commandId: command.commandId,
        kind: command.kind,
        nodeId: command.nodeId,
        siteId,
        agentId,
        ok,
        errorCode: ok ? '' : (options.failCode ?? 'DRIVER_ERROR'),
        errorMessage: ok ? '' : 'simulated failure',
        payload: ok ? payload : null,
        executedAtMs: Date.now(),
        commandNonce: command.nonce,
      },
      signer,
    );
    // The result intake answers: stored, or refused with a code (kept, with the bytes, for the test to look at).
    await js.publish(Subjects.agentResult(siteId, command.nodeId, command.commandId, command.nonce), bytes).catch((err: Error) => {
      refused.push({ command, bytes, reason: err.message });
    });
  };
  const loop = (async () => {
    for await (const m of messages) await execute(AgentCommand.parse(m.json()));
  })();
  return {
    executed,
    refused,
    async [Symbol.asyncDispose]() {
      await messages.close();
      await loop.catch(() => undefined);
    },
  };
}

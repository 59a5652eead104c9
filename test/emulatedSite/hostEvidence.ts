import { execFile } from 'node:child_process';
import { createReadStream } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { Streams } from '../../schemas/subjects.ts';
import { agentDurableFor } from '../../services/trust/broker/permissions.ts';
import { readPrefix } from '../support/diskFile.ts';
import { openReadModel } from '../support/readModelDb.ts';

/**
 * Whether the installed host's `bcd node` is pulling its commands right now: its durable (made when it joined) has a
 * pull request waiting, which only a connected, consuming agent keeps open.
 */
export async function nodeAgentPulling(nc: NatsConnection, siteId: string, nodeId: string): Promise<boolean> {
  const durable = agentDurableFor({ role: 'node', agentId: `node-${nodeId}`, siteId, nodeId });
  const info = await (await jetstreamManager(nc)).consumers.info(Streams.agentCommands.name, durable).catch(() => undefined);
  return (info?.num_waiting ?? 0) > 0;
}

/** Every workflow's steps with their wall time, oldest first: where an emulated-site run spent its time. */
export function stepTimings(dataDir: string): string {
  using db = openReadModel(dataDir, 'workflows');
  const rows = db
    .prepare(
      `SELECT w.node_id AS nodeId, w.operation AS operation, s.step_index AS i, s.step_id AS stepId, s.attempts AS attempts,
              (julianday(s.ended_at) - julianday(s.started_at)) * 86400 AS seconds
         FROM workflows w JOIN workflow_steps s ON s.workflow_id = w.workflow_id
        ORDER BY w.started_at, s.step_index`,
    )
    .all() as { nodeId: string; operation: string; i: number; stepId: string; attempts: number; seconds: number | null }[];
  return rows.map((r) => `${r.nodeId} ${r.operation} #${r.i} ${r.stepId} x${r.attempts}: ${r.seconds === null ? '-' : r.seconds.toFixed(1)} s`).join('\n');
}

/** True when every byte of the file is zero (read from the host side, in 4 MiB pieces). */
export async function allZero(file: string): Promise<boolean> {
  for await (const chunk of createReadStream(file, { highWaterMark: 4 << 20 }) as AsyncIterable<Buffer>) {
    for (let i = 0; i < chunk.length; i += 8) if (chunk.readBigUInt64LE(i) !== 0n) return false;
  }
  return true;
}

/** The image's MBR gap and FAT boot partition (1 + 32 MiB): nothing the booted host writes to. */
export const BOOT_PREFIX = 33 << 20;
/** End of a GPT's primary table (protective MBR, header and 128 entries: LBA 0–33). */
const PARTITION_TABLE_END = 34 * 512;

/**
 * The image is on the disk, with one change a deploy makes: userdata.write added its NoCloud cidata partition to the
 * table. The MBR's boot code before the table and every byte after the primary table are the image's.
 */
export function imageOnDisk(file: string, image: Buffer): boolean {
  const disk = readPrefix(file, image.length);
  return disk.subarray(0, 446).equals(image.subarray(0, 446)) && disk.subarray(PARTITION_TABLE_END).equals(image.subarray(PARTITION_TABLE_END));
}

/** What `bcd site` answers a DHCPDISCOVER from `mac`, sent by a PXE client on the LAN (the LAN DHCP server's namespace). */
export async function probeDhcp(lanNetns: string, mac: string): Promise<{ from: string; siaddr: string; file: string }[]> {
  const { stdout } = await promisify(execFile)(
    'ip',
    ['netns', 'exec', lanNetns, process.execPath, '--import', 'tsx', 'test/emulatedSite/dhcpProbe.ts', mac, '4000'],
    { cwd: join(import.meta.dirname, '../..') },
  );
  return stdout
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line));
}

/** Whether `needle` occurs anywhere in the file (read from the host side in 4 MiB pieces that overlap by its length). */
export async function diskHolds(file: string, needle: string): Promise<boolean> {
  const wanted = Buffer.from(needle);
  let tail = Buffer.alloc(0);
  for await (const chunk of createReadStream(file, { highWaterMark: 4 << 20 }) as AsyncIterable<Buffer>) {
    const window = Buffer.concat([tail, chunk]);
    if (window.includes(wanted)) return true;
    tail = window.subarray(Math.max(0, window.length - wanted.length + 1));
  }
  return false;
}

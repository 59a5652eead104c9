import { byteSize } from '../components/byteSize.ts';

/**
 * What a step's output says it did, in words an operator reads at a glance: which disks a wipe erased and how many
 * bytes it verified, which image was written where and whether it read back, the machine's power, which agent joined. Read from the
 * output's shape (`schemas/agent/diskWipe.ts` WipeReport, the ramdisk's written image), not the step id, so a plugin
 * step that reports the same shapes reads the same. The output is the API's JSON: every field is checked, never trusted.
 */
export interface StepOutputFact {
  readonly kind: 'disk' | 'verified' | 'image' | 'power' | 'agent';
  readonly text: string;
}

const record = (v: unknown): Record<string, unknown> | null => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null);
const count = (v: unknown): number | null => (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : null);
const text = (v: unknown): string | null => (typeof v === 'string' && v.length > 0 ? v : null);

/** One wiped disk: its path and identity, how it was erased and the bytes the erase reached. */
function wipedDisk(disk: Record<string, unknown>): { fact: string; bytes: number } | null {
  const path = text(disk.path);
  if (!path) return null;
  const identity = [text(disk.model), text(disk.serial) && `serial ${String(disk.serial)}`].filter(Boolean).join(', ');
  const method = text(disk.method) ?? 'unknown method';
  // A zeroed disk was read back whole; a discarded one was read back by sample (its count of blocks).
  const bytes = count(disk.verifiedBytes) ?? count(disk.discardedBytes) ?? 0;
  const sample = record(disk.sample);
  const how =
    method === 'discard'
      ? `${disk.secure === true ? 'secure ' : ''}discard of ${byteSize(bytes)}${sample ? `, ${count(sample.count) ?? '?'} sampled blocks read back as zeros` : ''}`
      : `zeroed, ${byteSize(bytes)} read back`;
  return { fact: `${path}${identity ? ` (${identity})` : ''}: ${how}`, bytes };
}

export function stepOutputFacts(output: unknown): StepOutputFact[] {
  const o = record(output);
  if (!o) return [];
  const facts: StepOutputFact[] = [];
  if (Array.isArray(o.disks) && text(o.method)) {
    const disks = o.disks.map((d) => record(d)).map((d) => (d ? wipedDisk(d) : null));
    for (const d of disks) if (d) facts.push({ kind: 'disk', text: `Wiped ${d.fact}` });
    const total = disks.reduce((sum, d) => sum + (d?.bytes ?? 0), 0);
    const attested = o.attested === true ? 'attested by the ramdisk' : o.attested === false ? 'not attested' : null;
    facts.push({ kind: 'verified', text: `${disks.length} disk(s), ${byteSize(total)} erased${attested ? `, ${attested}` : ''}` });
  }
  const digest = text(o.sha256);
  const written = count(o.bytesWritten);
  if (digest && written !== null) {
    const where = text(o.disk);
    facts.push({ kind: 'image', text: `Image sha256:${digest}${where ? ` on ${where}` : ''}` });
    facts.push({ kind: 'verified', text: `${byteSize(written)} written${o.verified === true ? ', read back and verified' : ', not read back'}` });
  }
  // power.set answers { action, before, after } and power.get { powerState } (daemon/redfish/power.ts).
  const [before, after, action] = [text(o.before), text(o.after), text(o.action)];
  if (after && action) facts.push({ kind: 'power', text: `Power ${before ?? 'unknown'} → ${after} (${action})` });
  const read = text(o.powerState);
  if (read) facts.push({ kind: 'power', text: `Power read: ${read}` });
  const agentId = text(o.agentId);
  if (agentId && facts.length === 0) facts.push({ kind: 'agent', text: `Agent ${agentId} joined` });
  return facts;
}

import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';

/**
 * What a running `npm start` tells the other processes of its data dir (services run by hand, `better-compute
 * doctor`): where its NATS server is and how it authenticates. Public facts only: no credential goes in here.
 */
export const StackRecord = z.object({
  natsUrl: z.string(),
  natsAuth: z.enum(['operator', 'none']),
  /** True when `npm start` runs the server itself (its store under `<dataDir>/nats`). */
  embedded: z.boolean(),
  apiUrl: z.string(),
  pid: z.number().int(),
  startedAt: z.string(),
});
export type StackRecord = z.infer<typeof StackRecord>;

const fileOf = (dataDir: string) => join(dataDir, 'stack.json');

/** Writes the record atomically, so a reader never sees half of it. */
export function writeStackRecord(dataDir: string, record: StackRecord): void {
  const tmp = `${fileOf(dataDir)}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(StackRecord.parse(record), null, 2)}\n`, { mode: 0o644 });
  renameSync(tmp, fileOf(dataDir));
}

/** The record of the stack that last ran on this data dir, or undefined when there is none (or it is unreadable). */
export function readStackRecord(dataDir: string): StackRecord | undefined {
  let text: string;
  try {
    text = readFileSync(fileOf(dataDir), 'utf8');
  } catch {
    return undefined;
  }
  try {
    const parsed = StackRecord.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** Removes the record when its stack stops, so nothing mistakes a stopped stack's port for a live one. */
export function removeStackRecord(dataDir: string, pid: number): void {
  if (readStackRecord(dataDir)?.pid === pid) rmSync(fileOf(dataDir), { force: true });
}

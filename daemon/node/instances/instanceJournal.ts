import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { RuntimeInstanceStatus } from '../../../schemas/bcx/bcxProtocol.ts';
import { HostInstanceId, InstanceSpecFields } from '../../../schemas/agent/hostInstances.ts';
import { syncFolder, writeFileDurably } from '../../agent/durableFile.ts';

/**
 * One instance as the host recorded it: the spec last asked for (without its user data), whether the runtime ever
 * answered an apply of it (`firstApplied`: later applies carry no user data), and the runtime's last answer. `settled`
 * is false from the moment a spec is recorded until its apply is answered: a plugin crash in between leaves it false,
 * and the host applies it again.
 */
export const InstanceRecord = z
  .object({
    spec: InstanceSpecFields.omit({ userData: true, fromSlot: true }),
    /** The runtime's id of the instance when it is not `spec.id`: a warm slot's, kept when a create took the slot. */
    runtimeId: HostInstanceId.optional(),
    firstApplied: z.boolean(),
    settled: z.boolean(),
    status: RuntimeInstanceStatus.nullable(),
    recordedAt: z.iso.datetime(),
  })
  .strict();
export type InstanceRecord = z.infer<typeof InstanceRecord>;

/**
 * The instance journal under `<stateDir>/instances/`: one `<id>.json` per instance, and `<id>.userdata` (0600) while a
 * first apply is unanswered, so a crash before the answer still boots the instance with its user data. Every write is
 * durable (temp file, fsync, rename, folder fsync): a power cut leaves the old record or the new one.
 */
export class InstanceJournal {
  readonly folder: string;

  constructor(stateDir: string) {
    this.folder = join(stateDir, 'instances');
  }

  #ensureFolder(): void {
    if (existsSync(this.folder)) return;
    mkdirSync(this.folder, { recursive: true, mode: 0o700 });
    // The new folder's entry must outlive a power loss too, not only what is written inside it.
    syncFolder(join(this.folder, '..'));
  }

  #file(id: string, ext: 'json' | 'userdata'): string {
    return join(this.folder, `${HostInstanceId.parse(id)}.${ext}`);
  }

  read(id: string): InstanceRecord | undefined {
    let text: string;
    try {
      text = readFileSync(this.#file(id, 'json'), 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
    return InstanceRecord.parse(JSON.parse(text));
  }

  write(record: InstanceRecord): void {
    this.#ensureFolder();
    writeFileDurably(this.#file(record.spec.id, 'json'), JSON.stringify(InstanceRecord.parse(record)), { mode: 0o600 });
  }

  /** Every recorded instance, by id. A record that does not parse is left out and named, never guessed at. */
  all(): { records: InstanceRecord[]; unreadable: string[] } {
    let entries: string[];
    try {
      entries = readdirSync(this.folder);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { records: [], unreadable: [] };
      throw err;
    }
    const records: InstanceRecord[] = [];
    const unreadable: string[] = [];
    for (const entry of entries.filter((e) => e.endsWith('.json')).sort()) {
      const parsed = (() => {
        try {
          return InstanceRecord.safeParse(JSON.parse(readFileSync(join(this.folder, entry), 'utf8')));
        } catch {
          return undefined;
        }
      })();
      if (parsed?.success && `${parsed.data.spec.id}.json` === entry) records.push(parsed.data);
      else unreadable.push(entry);
    }
    return { records, unreadable };
  }

  /** Keeps the user data of a first apply until the runtime answered it. */
  keepUserData(id: string, userData: string): void {
    this.#ensureFolder();
    writeFileDurably(this.#file(id, 'userdata'), userData, { mode: 0o600 });
  }

  userData(id: string): string | undefined {
    try {
      return readFileSync(this.#file(id, 'userdata'), 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
  }

  dropUserData(id: string): void {
    if (!existsSync(this.#file(id, 'userdata'))) return;
    rmSync(this.#file(id, 'userdata'), { force: true });
    syncFolder(this.folder);
  }

  /** Forgets the instance: its user data first, then its record (a crash in between leaves a record to remove again). */
  forget(id: string): void {
    this.dropUserData(id);
    if (!existsSync(this.#file(id, 'json'))) return;
    rmSync(this.#file(id, 'json'), { force: true });
    syncFolder(this.folder);
  }
}

import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** What the runtime keeps of an instance beside crun's own state: its image, and why its last start failed. */
export interface CrunInstanceRecord {
  readonly image: string;
  readonly desiredState: 'running' | 'stopped';
  /** Set when the last apply answered `error`; `list` keeps answering it until an apply succeeds. */
  readonly failure?: string;
  /** Its address on the configured network, kept for its life (allocated at its first apply). */
  readonly address?: string;
}

/** One JSON file per instance under `<state>/instances/`, replaced whole (temp file and rename). */
export function instanceRecords(stateDir: string) {
  const dir = join(stateDir, 'instances');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = (id: string) => join(dir, `${id}.json`);
  return {
    read(id: string): CrunInstanceRecord | undefined {
      try {
        return JSON.parse(readFileSync(file(id), 'utf8')) as CrunInstanceRecord;
      } catch {
        return undefined;
      }
    },
    write(id: string, record: CrunInstanceRecord): void {
      writeFileSync(`${file(id)}.tmp`, JSON.stringify(record), { mode: 0o600 });
      renameSync(`${file(id)}.tmp`, file(id));
    },
    forget: (id: string) => rmSync(file(id), { force: true }),
    ids: (): string[] =>
      readdirSync(dir)
        .filter((f) => f.endsWith('.json'))
        .map((f) => f.slice(0, -'.json'.length)),
  };
}

import { jetstreamManager } from '@nats-io/jetstream';
import type { Msg, MsgHdrs, NatsConnection } from '@nats-io/transport-node';
import Database from 'better-sqlite3';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

const headersText = (h: MsgHdrs | undefined) => (h ? JSON.stringify([...h.keys()].map((k) => [k, h.values(k)])) : '');

/** Every file under `dir`, recursively, with its raw bytes. */
export function filesUnder(dir: string): { path: string; bytes: Buffer }[] {
  const out: { path: string; bytes: Buffer }[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...filesUnder(path));
    else out.push({ path, bytes: readFileSync(path) });
  }
  return out;
}

/** Every row of every table of every SQLite file under `dir`, as JSON text per file. */
export function sqliteDumps(dir: string): { path: string; text: string }[] {
  return filesUnder(dir)
    .filter((f) => f.path.endsWith('.db'))
    .map(({ path }) => {
      const db = new Database(path, { readonly: true, fileMustExist: true });
      try {
        const tables = db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table'`).all() as { name: string }[];
        return { path, text: JSON.stringify(Object.fromEntries(tables.map((t) => [t.name, db.prepare(`SELECT * FROM "${t.name}"`).all()]))) };
      } finally {
        db.close();
      }
    });
}

/** Every message of a stream (data and headers), read by sequence. */
export async function streamMessages(nc: NatsConnection, stream: string): Promise<{ seq: number; subject: string; data: string; text: string }[]> {
  const jsm = await jetstreamManager(nc);
  const info = await jsm.streams.info(stream);
  const out: { seq: number; subject: string; data: string; text: string }[] = [];
  for (let seq = info.state.first_seq; seq <= info.state.last_seq && info.state.messages > 0; seq++) {
    const m = await jsm.streams.getMessage(stream, { seq }).catch(() => null);
    if (!m) continue;
    const data = Buffer.from(m.data).toString('utf8');
    out.push({ seq, subject: m.subject, data, text: `${headersText(m.header)}\n${data}` });
  }
  return out;
}

/** Records every message on `subjects` as the server delivers it (payload and headers), from its own connection. */
export function recordTraffic(nc: NatsConnection, subjects: string[]) {
  const seen: { subject: string; text: string }[] = [];
  const record = (_err: unknown, m: Msg) => {
    seen.push({ subject: m.subject, text: `${headersText(m.headers)}\n${Buffer.from(m.data).toString('utf8')}` });
  };
  const subs = subjects.map((s) => nc.subscribe(s, { callback: record }));
  return { seen, stop: () => subs.forEach((s) => s.unsubscribe()) };
}

/** The places (of `haystacks`) that contain any of `needles`, as "<where>: <needle>". */
export function leaks(needles: readonly string[], haystacks: readonly { where: string; text: string | Buffer }[]): string[] {
  const found: string[] = [];
  for (const h of haystacks) {
    const text = typeof h.text === 'string' ? h.text : h.text.toString('latin1');
    for (const n of needles) if (text.includes(n)) found.push(`${h.where}: ${n}`);
  }
  return found;
}

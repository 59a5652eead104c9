import Database from 'better-sqlite3';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { decodeSignedResult } from '../../schemas/agent/agentResultCodec.ts';
import { Streams } from '../../schemas/subjects.ts';

/** One message of BC_AGENT_COMMANDS as stored: its JetStream message id and the command it carries. */
export interface StoredAgentCommand {
  seq: number;
  msgId: string;
  commandId: string;
  kind: string;
  destructive: boolean;
}

/** Every message of BC_AGENT_COMMANDS, read one by one by sequence (what reached the agents' stream). */
export async function storedAgentCommands(nc: NatsConnection): Promise<StoredAgentCommand[]> {
  const jsm = await jetstreamManager(nc);
  const { state } = await jsm.streams.info(Streams.agentCommands.name);
  const out: StoredAgentCommand[] = [];
  for (let seq = state.first_seq; seq <= state.last_seq && state.messages > 0; seq++) {
    const command = await storedAgentCommandAt(nc, seq);
    if (command) out.push(command);
  }
  return out;
}

/**
 * The BC_AGENT_COMMANDS message at `seq`, or undefined when there is none (yet) or the server does not answer within
 * `timeoutMs` (a watcher polling across server restarts must not sit out the default 5 s on a lost request).
 */
export async function storedAgentCommandAt(nc: NatsConnection, seq: number, timeoutMs = 5_000): Promise<StoredAgentCommand | undefined> {
  const jsm = await jetstreamManager(nc, { checkAPI: false, timeout: timeoutMs }).catch(() => null);
  const msg = await jsm?.streams.getMessage(Streams.agentCommands.name, { seq }).catch(() => null);
  if (!msg) return undefined;
  const command = msg.json<{ commandId: string; kind: string; destructive: boolean }>();
  return { seq, msgId: msg.header?.get('Nats-Msg-Id') ?? '', commandId: command.commandId, kind: command.kind, destructive: command.destructive };
}

/** One row of an agent's command journal, with its signed result decoded. */
export interface JournalRow {
  commandId: string;
  kind: string;
  destructive: boolean;
  finished: boolean;
  ok: boolean | undefined;
  errorCode: string | undefined;
}

/** The rows of `<stateDir>/journal.db` (read-only; empty when the agent never ran there). */
export function journalRows(stateDir: string): JournalRow[] {
  const file = join(stateDir, 'journal.db');
  if (!existsSync(file)) return [];
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const rows = db.prepare('SELECT command_id, kind, destructive, result FROM executed ORDER BY started_at_ms').all() as {
      command_id: string;
      kind: string;
      destructive: number;
      result: Buffer | null;
    }[];
    return rows.map((r) => {
      const result = r.result ? decodeSignedResult(new Uint8Array(r.result)).result : undefined;
      return {
        commandId: r.command_id,
        kind: r.kind,
        destructive: r.destructive === 1,
        finished: r.result !== null,
        ok: result?.ok,
        errorCode: result?.errorCode,
      };
    });
  } finally {
    db.close();
  }
}

/** Where the simulated site keeps its agents' journals: the site agent's and one machine's (current) ramdisk's. */
export const simJournalDirs = (dataDir: string, siteId: string, nodeId: string) => ({
  site: join(dataDir, 'sim', siteId, 'site-agent'),
  ramdisk: join(dataDir, 'sim', siteId, 'machines', nodeId, 'ramdisk-state'),
});

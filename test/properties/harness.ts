import { setTimeout as sleep } from 'node:timers/promises';
import type { Projector } from '../../services/projectors/projector.ts';
import type { CommandBus } from '../../services/platform/commands/commandBus.ts';
import type { EventStore } from '../../services/platform/eventStore/eventStore.ts';
import { PlatformError } from '../../schemas/platformError.ts';
import type { GeneratedCommand, Outcome } from '../arbitraries/backbone.ts';
import { dumpTables, type TableDump } from './tables.ts';

/** A read model of the shared group or a `Projector` of its own. */
type Watched = Pick<Projector, 'projection' | 'durable' | 'status'>;

/** Runs one generated command through a real bus and reduces the answer to the model's `Outcome`. */
export async function runCommand(bus: CommandBus, command: GeneratedCommand): Promise<Outcome> {
  try {
    const r = await bus.execute({ name: command.name, payload: command.payload, commandId: command.commandId, actor: 'property' });
    if (r.duplicate) return { kind: 'duplicate', seq: r.seq };
    if (r.events.length === 0) return { kind: 'noop' };
    return { kind: 'appended', seq: r.seq, events: r.events };
  } catch (err) {
    if (err instanceof PlatformError) return { kind: 'refused', code: err.code };
    throw err;
  }
}

/** Resolves once the projector's checkpoint reached `seq`; throws with its status (and its durable's, given the store) after `timeoutMs`. */
export async function waitForCheckpoint(projector: Watched, seq: number, timeoutMs = 10_000, store?: EventStore): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const status = await projector.status();
    if (status.checkpoint >= seq) return;
    if (Date.now() > deadline) {
      const info = await store?.jsm.consumers.info(store.stream, projector.durable).catch((err: unknown) => ({ error: String(err) }));
      const durable =
        info && 'delivered' in info
          ? {
              delivered: info.delivered.stream_seq,
              ackFloor: info.ack_floor.stream_seq,
              ackPending: info.num_ack_pending,
              waiting: info.num_waiting,
              pending: info.num_pending,
              redelivered: info.num_redelivered,
            }
          : info;
      throw new Error(`${projector.projection.name} stuck at ${status.checkpoint}, wanted ${seq} (${JSON.stringify({ status, durable })})`);
    }
    await sleep(10);
  }
}

export function dumpProjectors(projectors: Iterable<Watched & Pick<Projector, 'db'>>): Record<string, TableDump> {
  const out: Record<string, TableDump> = {};
  for (const p of projectors) out[p.projection.name] = dumpTables(p.db);
  return out;
}

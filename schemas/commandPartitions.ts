/**
 * Commands on one aggregate go to one `commands` replica, so its cached aggregate is the latest and a decision is not
 * made on a state another replica has just moved (which the append refuses, and the command is then read and decided
 * again: twice the work). The sender hashes the aggregate's subject into one of `COMMAND_PARTITIONS` partitions and
 * sends to `bc.cmdp.<partition>.<name>`; the replicas share the partitions out among themselves. The route is only a
 * preference: with no owner the request goes to the queue group on `bc.cmd.<name>`, and the append's expected
 * sequence stays the last word whoever decides.
 */
import { z } from 'zod';
import { Subjects } from './subjects.ts';

/** Enough that a handful of replicas get near-even shares, few enough that each holds a few subscriptions. */
export const COMMAND_PARTITIONS = 64;

/**
 * FNV-1a (32 bit) with murmur3's finaliser, so keys that differ only in their last characters still spread: the same
 * on every sender and responder, and cheap enough to run on every command.
 */
export function routeHash(key: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    hash ^= key.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  hash ^= hash >>> 16;
  hash = Math.imul(hash, 0x85ebca6b);
  hash ^= hash >>> 13;
  hash = Math.imul(hash, 0xc2b2ae35);
  hash ^= hash >>> 16;
  return hash >>> 0;
}

export const commandPartitionOf = (routeKey: string): number => routeHash(routeKey) % COMMAND_PARTITIONS;

/**
 * Rendezvous hashing: the responder a partition belongs to is the one with the highest hash of (responder,
 * partition). Every responder that sees the same members agrees without talking, and a member joining or leaving
 * moves only the partitions it takes or had.
 */
export function partitionOwner(responders: Iterable<string>, partition: number): string | undefined {
  let owner: string | undefined;
  let best = -1;
  for (const responder of responders) {
    const weight = routeHash(`${responder}/${partition}`);
    if (weight > best || (weight === best && owner !== undefined && responder < owner)) {
      best = weight;
      owner = responder;
    }
  }
  return owner;
}

/** Every partition, by the responder it belongs to among `responders` (each of them listed, with none if it owns none). */
export function partitionsByOwner(responders: readonly string[]): Map<string, number[]> {
  const owned = new Map(responders.map((r) => [r, [] as number[]]));
  if (responders.length === 0) return owned;
  for (let partition = 0; partition < COMMAND_PARTITIONS; partition++) owned.get(partitionOwner(responders, partition)!)!.push(partition);
  return owned;
}

const PARTITIONED_PREFIX = Subjects.allPartitionedCommands.slice(0, -1);

/** The command a request subject names: `bc.cmd.<name>` or `bc.cmdp.<partition>.<name>`. */
export function commandNameOf(subject: string): string {
  if (subject.startsWith(PARTITIONED_PREFIX)) return subject.slice(subject.indexOf('.', PARTITIONED_PREFIX.length) + 1);
  return subject.slice(Subjects.command('').length);
}

/**
 * What a `commands` replica says on `bc.ctl.commands.responders`. `hello`: just started, the others announce
 * themselves at once; `alive`: the periodic beat; `leaving`: stopping, the others take its partitions now.
 */
export const ResponderAnnouncement = z.object({
  responderId: z.string().min(1).max(300),
  state: z.enum(['hello', 'alive', 'leaving']),
});
export type ResponderAnnouncement = z.infer<typeof ResponderAnnouncement>;

/** One `commands` replica as `GET /v1/services` shows it: the partitions it owns among the replicas the API has heard. */
export const CommandResponderView = z.object({ responderId: z.string(), partitions: z.array(z.number().int().nonnegative()) });
export type CommandResponderView = z.infer<typeof CommandResponderView>;

import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import { partitionsByOwner, ResponderAnnouncement, type CommandResponderView } from '../../schemas/commandPartitions.ts';
import { Subjects } from '../../schemas/subjects.ts';
import type { Logger } from '../platform/logger.ts';

/** Three beats of a responder (one every 2 s) may be lost before it counts as gone. */
export const RESPONDER_EXPIRY_MS = 6_500;

/** The `commands` replicas heard on `bc.ctl.commands.responders`, and when each was last heard. */
export class ResponderRoster {
  readonly #heardAt = new Map<string, number>();

  constructor(private readonly expiryMs: number = RESPONDER_EXPIRY_MS) {}

  /** Takes in one announcement; answers whether the members changed. */
  hear({ responderId, state }: ResponderAnnouncement, now = Date.now()): boolean {
    const wasMember = this.#heardAt.has(responderId);
    const isMember = state !== 'leaving';
    if (isMember) this.#heardAt.set(responderId, now);
    else this.#heardAt.delete(responderId);
    return isMember !== wasMember;
  }

  /** Forgets the responders not heard for the expiry; answers whether any was forgotten. */
  expire(now = Date.now()): boolean {
    let changed = false;
    for (const [id, heardAt] of this.#heardAt) {
      if (heardAt >= now - this.expiryMs) continue;
      this.#heardAt.delete(id);
      changed = true;
    }
    return changed;
  }

  members(): string[] {
    return [...this.#heardAt.keys()].sort();
  }

  /** Who owns which partitions, as every responder that has heard the same members computes it. */
  view(now = Date.now()): CommandResponderView[] {
    this.expire(now);
    return [...partitionsByOwner(this.members())].map(([responderId, partitions]) => ({ responderId, partitions }));
  }
}

/** Hands every well-formed announcement on `bc.ctl.commands.responders` to `heard` until the subscription ends. */
export function listenToResponders(nc: NatsConnection, log: Logger, heard: (announcement: ResponderAnnouncement) => void): Subscription {
  const sub = nc.subscribe(Subjects.commandResponders);
  void (async () => {
    for await (const msg of sub) {
      const parsed = ResponderAnnouncement.safeParse(safeJson(msg.string()));
      if (parsed.success) heard(parsed.data);
      else log.warn({ subject: msg.subject }, 'ignoring a malformed responder announcement');
    }
  })();
  return sub;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

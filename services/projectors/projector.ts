import type { Database } from 'better-sqlite3';
import type { EventStore } from '../platform/eventStore/eventStore.ts';
import type { Logger } from '../platform/logger.ts';
import type { Projection } from '../../projections/runtime/projection.ts';
import { ProjectorGroup } from './projectorGroup.ts';
import type { ReadModelFiles } from './readModelFiles.ts';
import type { ProjectorStatus, ReadModelProjector } from './readModelProjector.ts';

export type { ProjectorStatus } from './readModelProjector.ts';

/**
 * One read model on a durable of its own (`projector_<name>`): what `projector:<name>` runs, to keep a read model
 * apart from the shared `projectors` process (e.g. a heavy one). Same guarantees as the group it is a group of one of:
 * batched transactions that store the checkpoint with the rows, one ack per batch (AckAll), any number of restarts,
 * redeliveries or duplicates leave the same rows, and a broken live file is rebuilt in the background.
 */
export class Projector {
  readonly #group: ProjectorGroup;
  readonly #member: ReadModelProjector;

  constructor(store: EventStore, projection: Projection, files: ReadModelFiles, log: Logger) {
    this.#group = new ProjectorGroup(store, [{ projection, files }], log, `projector_${projection.name}`);
    this.#member = this.#group.members[0]!;
  }

  get projection(): Projection {
    return this.#member.projection;
  }

  get durable(): string {
    return this.#group.durable;
  }

  get db(): Database {
    return this.#member.db;
  }

  /** Resolves once the projector consumes; a corrupt live file is rebuilt in the background instead. */
  start(): Promise<void> {
    return this.#group.start();
  }

  stop(): Promise<void> {
    return this.#group.stop();
  }

  /** Replays the whole log into a new file while the old one keeps serving, then swaps them; starts consuming if it did not. */
  async rebuild(): Promise<void> {
    await this.#member.rebuild();
    if (!this.#group.started) await this.#group.start();
  }

  status(): Promise<ProjectorStatus> {
    return this.#member.status();
  }
}

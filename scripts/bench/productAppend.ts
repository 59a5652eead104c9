import type { EventBatch } from '../../schemas/envelope.ts';
import { Subjects } from '../../schemas/subjects.ts';
import { nodeAggregate } from '../../services/metal/node/node.ts';
import { AggregateRepository } from '../../services/platform/commands/aggregateRepository.ts';
import type { AppendResult, EventStore } from '../../services/platform/eventStore/eventStore.ts';

/**
 * Appends a bench node's batch as `CommandBus` does once it has decided: the expected sequence and message id, the
 * position, and the state the message carries (`AggregateRepository.stateAfter`), from the snapshot a repository holds
 * of each aggregate (this appender is its only writer). `carried: false` writes no state (the append before states
 * were carried), for a comparison in the same run.
 */
export function productAppender(store: EventStore, options: { carried?: boolean } = {}): (nodeId: string, batch: EventBatch) => Promise<AppendResult> {
  const repository = new AggregateRepository(store);
  return async (nodeId, batch) => {
    const base = repository.cachedOrInitial(nodeAggregate, nodeId);
    const after = repository.stateAfter(nodeAggregate, base, batch.events);
    const ack = await store.append(Subjects.aggregateEvents('metal', 'node', nodeId), batch, {
      expectedSeq: base.seq,
      msgId: batch.events[0]!.metadata.commandId,
      position: base.length + 1,
      state: options.carried === false ? undefined : after.carried,
    });
    if (!ack.duplicate) repository.applyAppended(nodeAggregate, nodeId, base, ack.seq, batch.events, after);
    return ack;
  };
}

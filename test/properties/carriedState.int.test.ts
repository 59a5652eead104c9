import fc from 'fast-check';
import { headers } from '@nats-io/transport-node';
import { describe, expect, it } from 'vitest';
import { allCommands } from '../../services/api/commandCatalog.ts';
import { nodeAggregate } from '../../services/metal/node/node.ts';
import { AggregateRepository } from '../../services/platform/commands/aggregateRepository.ts';
import { CommandBus } from '../../services/platform/commands/commandBus.ts';
import { EventHeaders } from '../../services/platform/eventStore/eventMac.ts';
import { foldStored } from '../arbitraries/backbone.ts';
import { enrollPayload } from '../support/commandPayloads.ts';
import { startBackbone } from '../support/backboneFixture.ts';

const NODE = 'n1';
const SUBJECT = `bc.evt.metal.node.${NODE}`;

/** One step of a node's life: a command that changes it, a retry of an earlier command, a crash, or a forged message. */
const stepArb = fc.oneof(
  { arbitrary: fc.record({ kind: fc.constant('maintenance' as const), on: fc.boolean(), reason: fc.constantFrom('fan', 'psu', 'disk') }), weight: 4 },
  { arbitrary: fc.record({ kind: fc.constant('labels' as const), key: fc.constantFrom('rack', 'row'), value: fc.constantFrom('a', 'b', 'c') }), weight: 3 },
  // Many long labels: a state of several KB, carried whole only every few messages (the others name that one).
  { arbitrary: fc.record({ kind: fc.constant('manyLabels' as const), count: fc.integer({ min: 8, max: 24 }) }), weight: 2 },
  // The same command id sent again (a client retrying, a message redelivered to the command service).
  { arbitrary: fc.record({ kind: fc.constant('retry' as const), back: fc.nat(40) }), weight: 2 },
  // The writing process dies: the next command is decided by a fresh one with nothing cached.
  { arbitrary: fc.record({ kind: fc.constant('crash' as const) }), weight: 1 },
  // A message on the subject the event store did not write (a copied state header under no valid MAC).
  { arbitrary: fc.record({ kind: fc.constant('forged' as const) }), weight: 1 },
);

describe('carried aggregate states', () => {
  it('a load from the last message carried state equals folding every event: state, length and remembered commands', async () => {
    await using env = await startBackbone({ projectors: false });
    await env.bus.execute({ name: 'site.create', payload: { siteId: 'dc1', name: 'DC 1' }, actor: 'setup' });
    let run = 0;
    // Messages naming an earlier one that carries the state (a state of several KB), over all runs.
    let named = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(stepArb, { minLength: 1, maxLength: 45 }), async (steps) => {
        // Each run on a node of its own, enrolled afresh.
        const node = `${NODE}-${run++}`;
        const subject = SUBJECT.replace(NODE, node);
        const newBus = () => new CommandBus(env.store, allCommands, { retries: 5 });
        let bus = newBus();
        await bus.execute({ name: 'metal.enroll', payload: enrollPayload(node), actor: 'setup', commandId: `${node}-enroll` });
        const sent: { commandId: string; name: string; payload: unknown }[] = [];
        for (const [i, step] of steps.entries()) {
          if (step.kind === 'crash') bus = newBus();
          else if (step.kind === 'forged') {
            const last = await env.store.lastEntry(subject);

            const h = headers();
            if (last && !last.held && last.entry.state) h.set(EventHeaders.state, last.entry.state);
            h.set(EventHeaders.position, '999');
            await env.store.js.publish(subject, new TextEncoder().encode('{"events":[]}'), { headers: h });
          } else if (step.kind === 'retry') {
            const again = sent[sent.length - 1 - (step.back % Math.max(1, sent.length))];
            if (again) {
              const result = await bus.execute({ ...again, actor: 'test' });
              expect(result.duplicate).toBe(true);
            }
          } else {
            const command =
              step.kind === 'maintenance'
                ? { name: 'metal.setMaintenance', payload: step.on ? { nodeId: node, on: true, reason: `${step.reason} ${i}` } : { nodeId: node, on: false } }
                : step.kind === 'labels'
                  ? { name: 'metal.setLabels', payload: { nodeId: node, set: { [step.key]: `${step.value}${i}` } } }
                  : {
                      name: 'metal.setLabels',
                      payload: {
                        nodeId: node,
                        set: Object.fromEntries(Array.from({ length: step.count }, (_, k) => [`long-label-${k}`, `v${i}-${'x'.repeat(56)}`])),
                      },
                    };
            const commandId = `${node}-cmd-${i}`;
            // Only a command that appended is remembered: a no-op one retried later is decided again.
            const result = await bus.execute({ ...command, commandId, actor: 'test' });
            if (result.events.length > 0) sent.push({ ...command, commandId });
          }
        }

        const byEvents = await new AggregateRepository(env.store).load(nodeAggregate, node, 'replica', { carried: false });
        const log = [];
        for await (const stored of env.store.readAfter(subject, 0)) log.push(stored);
        named += log.filter((m) => m.state?.includes(' @')).length;
        expect(byEvents.state).toEqual(
          foldStored(
            nodeAggregate,
            log.flatMap((m) => m.batch.events),
          ),
        );

        const reader = new AggregateRepository(env.store);
        const carried = await reader.load(nodeAggregate, node);
        const last = await env.store.lastEntry(subject);
        // The state came from the last message alone, unless a forged message is last (then the events were read) or
        // the only one (folded as it is).
        expect(carried.commandsFrom !== undefined).toBe(last?.held === false && !last.entry.rejection && last.previousSeq !== 0);
        const complete = await reader.withCommands(nodeAggregate, node, carried);
        expect(complete.commandsFrom).toBeUndefined();
        expect({ state: complete.state, seq: complete.seq, length: complete.length }).toEqual({
          state: byEvents.state,
          seq: byEvents.seq,
          length: byEvents.length,
        });
        for (const id of [`${node}-enroll`, ...sent.map((s) => s.commandId), `${node}-never-sent`]) {
          expect(complete.commands.get(id), id).toEqual(byEvents.commands.get(id));
        }
      }),
      { numRuns: 20 },
    );
    expect(named).toBeGreaterThan(0);
  });
});

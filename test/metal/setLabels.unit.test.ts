import { describe, expect, it } from 'vitest';
import type { MetalEvent } from '../../schemas/metal/events.ts';
import { SetLabels } from '../../schemas/metal/nodeCommands.ts';
import { nodeAggregate } from '../../services/metal/node/node.ts';
import { setLabels } from '../../services/metal/node/setLabels.ts';
import { deciderSpec } from './spec.ts';

const spec = deciderSpec(nodeAggregate);
const enrolled: MetalEvent = {
  type: 'NodeEnrolled',
  data: { nodeId: 'n1', siteId: 'dc1', bmc: { address: 'https://b', credentialsRef: 'secret:b' }, hardwareProfile: 'x', macs: ['52:54:00:aa:bb:01'] },
};
const labelled = (labels: Record<string, string>): MetalEvent => ({ type: 'NodeLabelsSet', data: { nodeId: 'n1', labels } });

describe('metal.setLabels', () => {
  it('sets labels on a node with none, the whole set in the event, keys in order', () => {
    spec([enrolled])
      .when(setLabels, { nodeId: 'n1', set: { zone: 'a', 'example.com/rack': 'r7' } })
      .then([labelled({ 'example.com/rack': 'r7', zone: 'a' })]);
  });

  it('sets and removes keys in one command, and the aggregate folds the result', () => {
    const { state } = spec([enrolled, labelled({ rack: 'r7', zone: 'a' })]);
    expect(state).toMatchObject({ labels: { rack: 'r7', zone: 'a' } });
    spec([enrolled, labelled({ rack: 'r7', zone: 'a' })])
      .when(setLabels, { nodeId: 'n1', set: { zone: 'b', gpu: '' }, remove: ['rack'] })
      .then([labelled({ gpu: '', zone: 'b' })]);
  });

  it('appends nothing when the labels would not change: the same values, or removing a key the node does not carry', () => {
    spec([enrolled, labelled({ zone: 'a' })])
      .when(setLabels, { nodeId: 'n1', set: { zone: 'a' } })
      .then([]);
    spec([enrolled, labelled({ zone: 'a' })])
      .when(setLabels, { nodeId: 'n1', remove: ['rack'] })
      .then([]);
    spec([enrolled]).when(setLabels, { nodeId: 'n1' }).then([]);
  });

  it('refuses setting or removing a key under bc.dev/ with LABEL_RESERVED', () => {
    spec([enrolled])
      .when(setLabels, { nodeId: 'n1', set: { 'bc.dev/site': 'elsewhere' } })
      .thenRejects('LABEL_RESERVED');
    spec([enrolled])
      .when(setLabels, { nodeId: 'n1', set: { zone: 'a', 'bc.dev/driver.crun': '9' } })
      .thenRejects('LABEL_RESERVED');
    spec([enrolled])
      .when(setLabels, { nodeId: 'n1', remove: ['bc.dev/cpu.cores'] })
      .thenRejects('LABEL_RESERVED');
  });

  it('refuses a node that is not enrolled with NOT_FOUND, and more than 64 labels with VALIDATION_FAILED', () => {
    spec([])
      .when(setLabels, { nodeId: 'n1', set: { zone: 'a' } })
      .thenRejects('NOT_FOUND');
    const many = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`k${i}`, 'v']));
    const more = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`m${i}`, 'v']));
    spec([enrolled, labelled(many)])
      .when(setLabels, { nodeId: 'n1', set: more })
      .thenRejects('VALIDATION_FAILED');
  });

  it('takes only valid keys and values, and a key either set or removed', () => {
    expect(SetLabels.safeParse({ nodeId: 'n1', set: { 'zone!': 'a' } }).success).toBe(false);
    expect(SetLabels.safeParse({ nodeId: 'n1', set: { zone: 'a b' } }).success).toBe(false);
    expect(SetLabels.safeParse({ nodeId: 'n1', remove: ['-x'] }).success).toBe(false);
    expect(SetLabels.safeParse({ nodeId: 'n1', set: { zone: 'a' }, remove: ['zone'] }).success).toBe(false);
    expect(SetLabels.safeParse({ nodeId: 'n1', labels: {} }).success).toBe(false);
  });
});

import { describe, expect, it } from 'vitest';
import { selectorOfTerms } from '../../schemas/metal/labelSelectorTerms.ts';
import { derivedNodeLabels, effectiveNodeLabels, LabelKey, LabelSelector, matchesSelector, NodeLabels } from '../../schemas/metal/nodeLabels.ts';

describe('node labels', () => {
  it('takes Kubernetes-shaped keys and values and refuses others', () => {
    for (const key of ['zone', 'bc.dev/driver.crun', 'example.com/rack_7', 'a']) expect(LabelKey.safeParse(key).success).toBe(true);
    for (const key of ['', '-zone', 'Example.com/x', 'a/b/c', `x/${'a'.repeat(64)}`, 'zone!']) expect(LabelKey.safeParse(key).success, key).toBe(false);
    expect(NodeLabels.safeParse({ zone: 'a', empty: '' }).success).toBe(true);
    expect(NodeLabels.safeParse({ zone: 'a b' }).success).toBe(false);
  });

  it('matches a selector only when every label and expression holds', () => {
    const labels = { zone: 'a', 'bc.dev/driver.crun': '1.8.1' };
    const selector = (s: unknown) => LabelSelector.parse(s);
    expect(matchesSelector(labels, selector({}))).toBe(true);
    expect(matchesSelector(labels, selector({ matchLabels: { zone: 'a' } }))).toBe(true);
    expect(matchesSelector(labels, selector({ matchLabels: { zone: 'b' } }))).toBe(false);
    expect(matchesSelector(labels, selector({ matchExpressions: [{ key: 'zone', operator: 'In', values: ['b', 'a'] }] }))).toBe(true);
    expect(matchesSelector(labels, selector({ matchExpressions: [{ key: 'zone', operator: 'NotIn', values: ['a'] }] }))).toBe(false);
    expect(matchesSelector(labels, selector({ matchExpressions: [{ key: 'gpu', operator: 'NotIn', values: ['x'] }] }))).toBe(true);
    expect(matchesSelector(labels, selector({ matchExpressions: [{ key: 'bc.dev/driver.crun', operator: 'Exists' }] }))).toBe(true);
    expect(matchesSelector(labels, selector({ matchExpressions: [{ key: 'zone', operator: 'DoesNotExist' }] }))).toBe(false);
  });

  it('derives site, CPU, memory and one label per advertised driver, with versions made label values', () => {
    const labels = derivedNodeLabels({ siteId: 'dc1', cpus: 16, memoryMib: 65_536, drivers: [{ id: 'crun', version: '1.8.1+deb12u1' }] });
    expect(labels).toEqual({ 'bc.dev/site': 'dc1', 'bc.dev/cpu.cores': '16', 'bc.dev/memory.mib': '65536', 'bc.dev/driver.crun': '1.8.1_deb12u1' });
    expect(NodeLabels.safeParse(labels).success).toBe(true);
  });

  it('derives only the site when the inventory is unknown and no driver is advertised', () => {
    expect(derivedNodeLabels({ siteId: 'dc1', cpus: null, memoryMib: null })).toEqual({ 'bc.dev/site': 'dc1' });
  });

  it("puts the derived labels over the operator's: an operator label under bc.dev/ never overrides or adds one", () => {
    const labels = effectiveNodeLabels(
      { zone: 'a', 'bc.dev/site': 'forged', 'bc.dev/driver.qemu': '1' },
      { siteId: 'dc1', cpus: 8, memoryMib: 4096, drivers: [{ id: 'crun', version: '1.8.1' }] },
    );
    expect(labels).toEqual({ zone: 'a', 'bc.dev/site': 'dc1', 'bc.dev/cpu.cores': '8', 'bc.dev/memory.mib': '4096', 'bc.dev/driver.crun': '1.8.1' });
  });

  it('reads ?label= terms as key=value or key, AND-ed across parameters and commas', () => {
    const select = (terms: string[]) => {
      const parsed = selectorOfTerms(terms);
      if ('problem' in parsed) throw new Error(parsed.problem);
      return parsed.selector;
    };
    const node = { zone: 'a', 'bc.dev/driver.crun': '1.8.1', empty: '' };
    expect(matchesSelector(node, select(['zone=a']))).toBe(true);
    expect(matchesSelector(node, select(['zone=b']))).toBe(false);
    expect(matchesSelector(node, select(['bc.dev/driver.crun']))).toBe(true);
    expect(matchesSelector(node, select(['bc.dev/driver.qemu']))).toBe(false);
    expect(matchesSelector(node, select(['zone=a', 'bc.dev/driver.crun']))).toBe(true);
    expect(matchesSelector(node, select(['zone=a,bc.dev/driver.qemu']))).toBe(false);
    expect(matchesSelector(node, select(['empty=']))).toBe(true);
    expect(matchesSelector(node, select(['zone=a', 'zone=b']))).toBe(false);
  });

  it('answers a malformed term with a problem naming it, never a selector', () => {
    for (const terms of [[''], ['zone=a b'], ['zone==a'], ['=a'], ['zone!'], ['a,'], Array.from({ length: 33 }, (_, i) => `k${i}`)]) {
      expect(selectorOfTerms(terms), JSON.stringify(terms)).toEqual({ problem: expect.any(String) });
    }
    expect(selectorOfTerms(['zone=a b'])).toEqual({ problem: expect.stringContaining('zone=a b') });
  });
});

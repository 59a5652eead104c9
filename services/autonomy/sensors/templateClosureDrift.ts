import type { Signal } from '../../../schemas/autonomy/signals.ts';
import type { SnapshotPlanChange } from '../../../schemas/autonomy/snapshot.ts';
import { defineSensor } from './sensor.ts';

const byCodePoint = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
const changeOf = (c: SnapshotPlanChange): string => `${c.module} ${c.from ?? '(none)'} -> ${c.to ?? '(none)'}`;

/**
 * A host whose pinned plan differs from what its template and pins resolve to now (`template-closure-drift`): a range
 * of its template was widened or narrowed, a template it includes changed, or a version was published that the
 * template now selects. Assigning a template or publishing changes nothing on hosts until a rollout or an explicit
 * apply, so this is how the operator learns a host lags its template. `facts.modules` names the modules that would
 * change and `facts.changes` each one from -> to (`(none)`: added or removed); when the template no longer resolves,
 * `facts.conflicts` lists the closure conflicts' codes with what they name (`CODE:subject`).
 *
 * No grace: the resolution reads the same read model the plan was written from, so a difference is never a report
 * still on its way. Hosts whose node is gone (or retired) are not judged.
 */
export const templateClosureDriftSensor = defineSensor({
  name: 'template-closure-drift',
  emits: ['template-closure-drift'],
  assess(snapshot) {
    const nodes = new Map(snapshot.nodes.filter((n) => n.state !== 'retired').map((n) => [n.nodeId, n]));
    const closures = snapshot.templateClosures.filter((c) => nodes.has(c.nodeId)).sort((a, b) => byCodePoint(a.nodeId, b.nodeId));
    const signals: Signal[] = [];
    for (const c of closures) {
      const node = nodes.get(c.nodeId)!;
      let facts: Record<string, string>;
      let detail: string;
      if (c.now.ok) {
        if (c.now.planDigest === c.pinnedDigest) continue;
        const changes = [...c.now.changes].sort((a, b) => byCodePoint(a.module, b.module));
        facts = { template: c.template, modules: changes.map((x) => x.module).join(','), changes: changes.map(changeOf).join(',') };
        detail = `template ${c.template} resolves to another plan than the pinned one: ${changes.map(changeOf).join('; ')}`;
      } else {
        const conflicts = c.now.conflicts.map((x) => `${x.code}:${x.subject}`).sort(byCodePoint);
        facts = { template: c.template, conflicts: [...new Set(conflicts)].join(',') };
        detail = `template ${c.template} no longer resolves: ${[...new Set(conflicts)].join('; ')}`;
      }
      signals.push({
        kind: 'template-closure-drift',
        sensor: 'template-closure-drift',
        key: c.nodeId,
        target: { type: 'node', id: c.nodeId },
        siteId: node.siteId,
        detail: detail.slice(0, 400),
        facts: Object.fromEntries(Object.entries(facts).map(([k, v]) => [k, v.slice(0, 200)])),
        controlPlane: node.controlPlane,
      });
    }
    return { assessed: closures.length, signals };
  },
});

import type { WorkflowStepView } from '../api/shapes.ts';

const param = (params: Record<string, unknown>, key: string): string => {
  const value = params[key];
  return typeof value === 'string' || typeof value === 'number' ? String(value) : JSON.stringify(value);
};

const powerWords: Record<string, string> = {
  on: 'power the machine on',
  off: 'power the machine off',
  cycle: 'power-cycle (reboot) the machine',
  softOff: 'shut the machine down',
};

/**
 * A destructive step as an approver should read it: what it does to the machine, with the parameters the batch digest
 * covers (an approval names this image, on this node).
 */
export function describeStep(step: Pick<WorkflowStepView, 'stepId' | 'params'>): string {
  const p = step.params;
  switch (step.stepId) {
    case 'power.set':
      return powerWords[param(p, 'action')] ?? `set power: ${param(p, 'action')}`;
    case 'disk.wipe':
      return `wipe every disk (${param(p, 'mode') === 'discard' ? 'discard' : 'overwrite with zeros'})`;
    case 'image.write':
      return `overwrite the disk with the image ${param(p, 'imageUrl')} (sha256 ${param(p, 'sha256').slice(0, 12)}…)`;
    case 'firmware.update':
      return `flash firmware from ${param(p, 'imageUrl')}`;
    case 'site.httpProxy':
      return `send ${param(p, 'method')} ${param(p, 'url')} to the machine's own API`;
    default:
      return `run ${step.stepId} with ${JSON.stringify(p)}`;
  }
}

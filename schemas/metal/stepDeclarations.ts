import { z } from 'zod';

/**
 * What a step's success attests, when the engine must check it rather than trust it. `wipe`: the step's signed
 * `disk.wipe` result covers every disk of the node (`workflow.completeStep` verifies it; a release or retire ends
 * clean only with one). The engine asks the step's declaration, never its id.
 */
export const StepAttests = z.enum(['wipe']);
export type StepAttests = z.infer<typeof StepAttests>;

/**
 * What the node records from a step's output when an inspection completes: `inventory`, the hardware inventory the
 * BMC reported; `inBandInventory`, what the ramdisk saw from inside (both go to `metal.recordInventory`).
 */
export const StepRecords = z.enum(['inventory', 'inBandInventory']);
export type StepRecords = z.infer<typeof StepRecords>;

/** A step's declared behaviour, as it defines it (`defineStep`), registers it and the workflow freezes it. Absent: none. */
export const StepDeclarations = z.object({ attests: StepAttests.optional(), records: StepRecords.optional() });
export type StepDeclarations = z.infer<typeof StepDeclarations>;

/**
 * Why a step's declarations cannot hold, or undefined. A wipe is attested only by a signed `disk.wipe` result, so a
 * step that attests one must send `disk.wipe` (anything else is refused at enqueue) and be destructive (so quorum and
 * a cancel treat it as the wipe it is).
 */
export function declarationIssue(step: StepDeclarations & { readonly sends: readonly string[]; readonly destructive: boolean }): string | undefined {
  if (step.attests === 'wipe' && !step.sends.includes('disk.wipe')) return 'a step that attests a wipe must send disk.wipe';
  if (step.attests === 'wipe' && !step.destructive) return 'a step that attests a wipe must be destructive';
  return undefined;
}

/** The declared fields only, leaving absent ones out (the frozen step and the registration stay as small as before). */
export const declarationsOf = (step: StepDeclarations): StepDeclarations => ({
  ...(step.attests ? { attests: step.attests } : {}),
  ...(step.records ? { records: step.records } : {}),
});

/**
 * Workflows started before steps declared their behaviour (`WorkflowStarted` v1) froze steps without it: the engine
 * then recognised these ids, and only these. Their declarations are the ones the built-in steps make now, so an old
 * log rebuilds to what it meant (used by the v1 -> v2 upcaster only; nothing else maps ids to behaviour).
 */
export const declarationsBeforeV2: Readonly<Record<string, StepDeclarations>> = {
  'disk.wipe': { attests: 'wipe' },
  'inventory.read': { records: 'inventory' },
  'hardware.probe': { records: 'inBandInventory' },
};

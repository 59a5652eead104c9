import { z } from 'zod';
import { agentCommandKinds } from '../agent/agentCommand.ts';
import { PolicyDeclaration } from '../autonomy/policies.ts';
import { ResourceId } from '../ids.ts';
import { HardwareProfile } from '../metal/hardwareProfile.ts';
import { ProviderManifest } from '../vps/providerAccountShape.ts';
import { declarationIssue, StepAttests, StepRecords } from '../metal/stepDeclarations.ts';
import { NodeOperation, ProfileId, RetryPolicy, StepRunsOn } from '../metal/workflow.ts';

/** A step id: dotted lowercase words (`autoinstall.renderIso`); the last token of its work subject. */
export const StepId = z.string().regex(/^[a-z][A-Za-z0-9]*(\.[a-z][A-Za-z0-9]*)+$/, 'a step id is dotted camelCase words, e.g. "acme.renderIso"');

/**
 * What the control plane knows of a step without running it: enough to route, validate profiles, gate quorum and
 * know what its success means (`attests`, `records`: absent in registrations older than them, and then none).
 */
export const StepDescriptor = z
  .object({
    id: StepId,
    runsOn: StepRunsOn,
    destructive: z.boolean(),
    sends: z.array(z.enum(agentCommandKinds)),
    relays: z.array(z.literal('site')),
    attests: StepAttests.optional(),
    records: StepRecords.optional(),
  })
  .superRefine((step, ctx) => {
    const issue = declarationIssue(step);
    if (issue) ctx.addIssue({ code: 'custom', message: issue, path: ['attests'] });
  });
export type StepDescriptor = z.infer<typeof StepDescriptor>;

/**
 * A parameter value taken from elsewhere: `{ $input, default? }` from the operation's inputs when the workflow starts,
 * `{ $fromStep, field }` from an earlier step's output when the step runs. Anything else is a literal.
 */
export const InputRef = z.object({ $input: z.string().min(1), default: z.unknown().optional() }).strict();
export const StepOutputRef = z.object({ $fromStep: StepId, field: z.string().min(1) }).strict();
export type InputRef = z.infer<typeof InputRef>;
export type StepOutputRef = z.infer<typeof StepOutputRef>;

/** A step as a profile lists it; unset fields take the defaults (5 min, 3 attempts 2 s apart, the step's destructive). */
export const ProfileStepSpec = z.object({
  id: StepId.or(z.enum(agentCommandKinds)),
  runsOn: StepRunsOn,
  params: z.record(z.string(), z.unknown()).optional(),
  timeoutMs: z.number().int().positive().optional(),
  retry: RetryPolicy.partial().optional(),
  destructive: z.boolean().optional(),
});
export type ProfileStepSpec = z.infer<typeof ProfileStepSpec>;

/**
 * A profile: the recipe for one node operation (`role`) on a kind of machine (`target`). Data only, so a plugin can
 * register it and `profiles.validate` can check it without running anything.
 */
export const ProfileDescriptor = z.object({
  id: ProfileId,
  version: z.number().int().positive(),
  target: z.literal('metal'),
  role: NodeOperation,
  steps: z.array(ProfileStepSpec).min(1).max(64),
});
export type ProfileDescriptor = z.infer<typeof ProfileDescriptor>;

/** A driver a plugin brings (a BMC dialect, a disk or image handler): listed by `drivers.list`. */
export const DriverDescriptor = z.object({ id: ResourceId, kind: z.string().min(1).max(64), description: z.string().max(500).default('') });
export type DriverDescriptor = z.infer<typeof DriverDescriptor>;

/**
 * `plugins.register`: what a plugin process announces when it starts (again at every start, with its version).
 * `policies` are the intervention categories it declares for fleet autonomy (absent in registrations older than them).
 */
export const PluginRegistration = z
  .object({
    pluginId: ResourceId,
    version: z.string().regex(/^\d+\.\d+\.\d+([-+][0-9A-Za-z.-]+)?$/, 'a semantic version, e.g. 1.2.0'),
    steps: z.array(StepDescriptor).max(256),
    profiles: z.array(ProfileDescriptor).max(256),
    drivers: z.array(DriverDescriptor).max(256),
    /** Each VPS provider's id and the shape its accounts must have (`vps.createProviderAccount` checks it). */
    providers: z.array(ProviderManifest).max(64),
    policies: z.array(PolicyDeclaration).max(64).default([]),
    /** Hardware profiles (`{ description, drivers }`) the plugin declares; absent in registrations older than them. */
    hardwareProfiles: z.array(HardwareProfile).max(64).optional(),
  })
  .strict();
export type PluginRegistration = z.infer<typeof PluginRegistration>;

import { z } from 'zod';
import { DriverDescriptor, PluginRegistration, ProfileDescriptor } from './registration.ts';

/** One problem `profiles.validate` found, with a stable code. */
export const ProfileIssue = z.object({
  stepIndex: z.number().int().nonnegative().nullable(),
  stepId: z.string().nullable(),
  code: z.enum(['PROFILE_UNKNOWN', 'STEP_UNKNOWN', 'RUNS_ON_MISMATCH', 'FROM_STEP_UNKNOWN', 'ROLE_MISMATCH', 'INVALID']),
  message: z.string(),
});
export type ProfileIssue = z.infer<typeof ProfileIssue>;

/** `POST /v1/profiles/validate`: a profile by id, or a profile not yet registered. */
export const ValidateProfileRequest = z.union([z.object({ profileId: z.string().min(1) }).strict(), z.object({ profile: z.unknown() }).strict()]);
export const ProfileValidation = z.object({ profileId: z.string().nullable(), ok: z.boolean(), issues: z.array(ProfileIssue) });
export type ProfileValidation = z.infer<typeof ProfileValidation>;

/** A plugin as `plugins.list` shows it: its latest registration and which replicas answered just now. */
export const PluginView = PluginRegistration.extend({
  registeredAt: z.string(),
  alive: z.boolean(),
  replicas: z.array(z.object({ instanceId: z.string(), version: z.string(), startedAt: z.string() })),
});
export type PluginView = z.infer<typeof PluginView>;

export const DriverView = DriverDescriptor.extend({ pluginId: z.string() });
export type DriverView = z.infer<typeof DriverView>;
export const ProfileView = ProfileDescriptor.extend({ pluginId: z.string().nullable() });
export type ProfileView = z.infer<typeof ProfileView>;

/** What a plugin replica answers on `bc.plugin.<id>.ping`. */
export const PluginPing = z.object({ pluginId: z.string(), instanceId: z.string(), version: z.string(), startedAt: z.string() });
export type PluginPing = z.infer<typeof PluginPing>;

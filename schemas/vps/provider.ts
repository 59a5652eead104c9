import { z } from 'zod';

/**
 * The contract between the VPS module and a cloud provider plugin: the shapes a `ProviderClient` (see
 * `plugins/sdk/provider.ts`) takes and returns. Provider-neutral spelling; each plugin maps its cloud's wire shapes
 * onto these in its own codec. Nothing here does I/O.
 */

/** A machine size the provider sells: what `createInstance` accepts as `offerId`. */
export const ProviderOffer = z
  .object({
    offerId: z.string().min(1),
    vcpus: z.number().int().positive(),
    memoryMib: z.number().int().positive(),
    diskGib: z.number().int().positive(),
  })
  .strict();
export type ProviderOffer = z.infer<typeof ProviderOffer>;

/**
 * What to create. `clientToken` is the idempotency key: a provider must return the instance already created with the
 * same token instead of a second one (see `clientTokenOf`, which derives it from the platform's instance id).
 */
export const ProviderInstanceSpec = z
  .object({
    clientToken: z.string().min(1).max(64),
    name: z.string().min(1).max(63),
    offerId: z.string().min(1),
    image: z.string().min(1),
    sshKeys: z.array(z.string().min(1)),
    /** cloud-init user data, passed through unchanged; absent means none. */
    userData: z.string().optional(),
  })
  .strict();
export type ProviderInstanceSpec = z.infer<typeof ProviderInstanceSpec>;

/**
 * Provider-neutral lifecycle of a cloud instance. Transitional states (`provisioning`, `deleting`) settle on their own;
 * `error` is the provider saying the instance is broken; `deleted` is gone (a provider may also answer not-found).
 */
export const ProviderInstanceState = {
  provisioning: 'provisioning',
  running: 'running',
  stopped: 'stopped',
  deleting: 'deleting',
  deleted: 'deleted',
  error: 'error',
} as const;
export type ProviderInstanceState = (typeof ProviderInstanceState)[keyof typeof ProviderInstanceState];

/** One instance as the provider reports it. `addresses` are the public IPs, empty while none is assigned. */
export const ProviderInstance = z
  .object({
    providerInstanceId: z.string().min(1),
    clientToken: z.string().min(1),
    state: z.enum(ProviderInstanceState),
    addresses: z.array(z.string()),
    /** The provider's own words about the state (why `error`), for operators; never matched on. */
    message: z.string().optional(),
  })
  .strict();
export type ProviderInstance = z.infer<typeof ProviderInstance>;

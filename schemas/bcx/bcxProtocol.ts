import { z } from 'zod';

/**
 * bcx: how `bcd` and a driver plugin talk, over the plugin's stdin and stdout. Each frame is a 4-byte big-endian
 * length and that many bytes of UTF-8 JSON (stderr is the plugin's log). The plugin speaks first with `hello`, its
 * manifest; the daemon then sends `invoke` frames, each answered by one `result` with the same `id`, in any order.
 * Version 1 is this file; a plugin announcing another version is stopped.
 */
export const BCX_PROTOCOL_VERSION = 1;
/** A frame larger than this is a broken or hostile plugin, not a large answer: the plugin is stopped. */
export const BCX_MAX_FRAME_BYTES = 4 * 1024 * 1024;

export const BcxPluginId = z.string().regex(/^[a-z0-9][a-z0-9._-]{0,62}$/, 'a plugin id is lower-case letters, digits, ".", "_" and "-" (at most 63)');

/** What a plugin provides: `runtime` serves instances (`list`, `apply`, `remove`); other kinds name BMC or disk drivers. */
export const BcxDriverKind = z.enum(['runtime', 'power', 'boot', 'deploy', 'inventory']);
export type BcxDriverKind = z.infer<typeof BcxDriverKind>;

/**
 * A runtime that accepts an instance's user data on the first start of a never-started instance (docs/bcx.md,
 * "Warm starts"): `bcd node` may prepare it stopped ahead of time (a warm slot) and hand it to a create later. A runtime
 * that does not declare it never gets warm slots: its instances are created cold.
 */
export const BCX_WARM_START = 'warm-start';

/**
 * What a plugin declares it can do beyond its kinds' operations. Free-form names, so a plugin declaring a feature this
 * daemon does not know still says hello; the daemon acts only on the ones it knows (`BCX_WARM_START`).
 */
export const BcxFeature = z.string().regex(/^[a-z][a-z0-9-]{0,31}$/);

export const BcxManifest = z.strictObject({
  id: BcxPluginId,
  version: z.string().min(1).max(64),
  kinds: z.array(BcxDriverKind).min(1).max(8),
  description: z.string().max(500).optional(),
  /** Absent: none. A plugin written before features existed declares none and works as before. */
  features: z.array(BcxFeature).max(16).optional(),
});
export type BcxManifest = z.infer<typeof BcxManifest>;

/** What a daemon advertises of a running plugin in its signed heartbeat (`Hello.drivers`). */
export const BcxDriverAdvert = BcxManifest.omit({ description: true });
export type BcxDriverAdvert = z.infer<typeof BcxDriverAdvert>;

export const BcxHello = z.strictObject({ type: z.literal('hello'), protocol: z.number().int(), manifest: BcxManifest });

export const BcxInvoke = z.strictObject({
  type: z.literal('invoke'),
  id: z.number().int().nonnegative(),
  operation: z.string().regex(/^[a-zA-Z][a-zA-Z0-9.]{0,63}$/),
  /** Positional JSON arguments, as the operation's table says. */
  args: z.array(z.unknown()).max(16),
});
export type BcxInvoke = z.infer<typeof BcxInvoke>;

export const BcxError = z.strictObject({ code: z.string().regex(/^[A-Z][A-Z0-9_]{0,63}$/), message: z.string().max(2_000) });
export type BcxError = z.infer<typeof BcxError>;

export const BcxResult = z.union([
  z.strictObject({ type: z.literal('result'), id: z.number().int().nonnegative(), ok: z.literal(true), value: z.unknown() }),
  z.strictObject({ type: z.literal('result'), id: z.number().int().nonnegative(), ok: z.literal(false), error: BcxError }),
]);
export type BcxResult = z.infer<typeof BcxResult>;

/** What a plugin may send: its hello once, then results. */
export const BcxPluginFrame = z.union([BcxHello, BcxResult]);
export type BcxPluginFrame = z.infer<typeof BcxPluginFrame>;

/** The instance operations a `runtime` plugin answers, and what each answers (walkthrough 4's table). */
export const RuntimeInstanceStatus = z.strictObject({
  id: z.string().min(1).max(128),
  state: z.enum(['pending', 'running', 'stopped', 'error']),
  addresses: z.array(z.string().max(64)).max(32),
  message: z.string().max(2_000).optional(),
});
export type RuntimeInstanceStatus = z.infer<typeof RuntimeInstanceStatus>;

import { z } from 'zod';

/** A module's name: what templates, assignments and `requires` name it by, and its aggregate id (`bc.evt.fleet.module.<name>`). */
export const ModuleName = z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/, 'must be lowercase letters, digits and dashes (at most 63)');
export type ModuleName = z.infer<typeof ModuleName>;

/** A version: semver 2.0.0 (https://semver.org), build metadata refused, since two versions differing only there compare equal. */
export const ModuleVersion = z
  .string()
  .max(64)
  .regex(
    /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?$/,
    'must be a semver version (1.2.3 or 1.2.3-rc.1, no build metadata)',
  );
export type ModuleVersion = z.infer<typeof ModuleVersion>;

/** A semver range as npm's `semver` reads it (`^1.2`, `>=1.0.0 <2`, `1.x || 2.x`); the closure resolver parses it. */
export const VersionRange = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[0-9A-Za-z.*^~<>=|\- ]+$/, 'must be a semver range');

/** A capability a module provides or needs (`dns-resolver`, `container-runtime`). */
export const Capability = z.string().regex(/^[a-z0-9][a-z0-9.-]{0,62}$/, 'must be lowercase letters, digits, dots and dashes');

/**
 * A file's path inside the module's folder: relative, `/`-separated, no empty, `.` or `..` segment, printable ASCII
 * without a backslash, and short enough for a ustar header (docs/modules.md). Whatever unpacks it can join it under
 * `<state>/modules/<name>/<version>/` without leaving that folder.
 */
export const ModuleFilePath = z
  .string()
  .min(1)
  .max(240)
  .regex(/^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/, 'must be printable ASCII')
  .refine((p) => !p.includes('\\') && !p.startsWith('/') && p.split('/').every((s) => s !== '' && s !== '.' && s !== '..'), {
    message: 'must be a relative path without empty, . or .. segments',
  });

/** One file of a version: its path, sha256 (hex) and permission bits (no setuid, setgid or sticky bit). */
export const ModuleFile = z
  .object({
    path: ModuleFilePath,
    sha256: z.string().regex(/^[0-9a-f]{64}$/, 'must be a lowercase hex sha256'),
    mode: z.number().int().min(0).max(0o777),
  })
  .strict();
export type ModuleFile = z.infer<typeof ModuleFile>;

/** What a module needs: a capability, or a module by name, at a version in `range`. Exactly one of the two. */
export const ModuleRequirement = z.union([
  z.object({ capability: Capability, range: VersionRange }).strict(),
  z.object({ module: ModuleName, range: VersionRange }).strict(),
]);
export type ModuleRequirement = z.infer<typeof ModuleRequirement>;

/** A probe `bcd node` runs after applying the module: healthy when `command` exits 0 in the given shell. */
export const ModuleProbe = z
  .object({
    name: z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/),
    command: z.string().min(1).max(4_096),
    shell: z.enum(['login', 'nonLogin']),
  })
  .strict();
export type ModuleProbe = z.infer<typeof ModuleProbe>;

const unique = (values: readonly string[]) => new Set(values).size === values.length;

const manifestFields = {
  name: ModuleName,
  version: ModuleVersion,
  provides: z.array(Capability).max(64).refine(unique, 'provides repeats a capability'),
  requires: z.array(ModuleRequirement).max(64),
  /** Capabilities no other module on the same host may provide (two DNS resolvers on port 53). */
  exclusive: z.array(Capability).max(64).refine(unique, 'exclusive repeats a capability'),
  rebootRequired: z.boolean(),
  probes: z
    .array(ModuleProbe)
    .max(32)
    .refine((ps) => unique(ps.map((p) => p.name)), 'probe names repeat'),
};

/**
 * What a module's author writes (`module.json` in the folder `better-compute modules pack` reads): the manifest
 * without its files, which pack lists and hashes itself.
 */
export const ModuleSource = z.object(manifestFields).strict();
export type ModuleSource = z.infer<typeof ModuleSource>;

/**
 * A version's manifest (`manifest.json` of the bundle), signed by its publisher: everything `bcd node` verifies the
 * unpacked files against and the closure resolver reads. Files are sorted by path, each path once.
 */
export const ModuleManifest = z
  .object({
    ...manifestFields,
    files: z
      .array(ModuleFile)
      .max(10_000)
      .refine((fs) => fs.every((f, i) => i === 0 || fs[i - 1]!.path < f.path), 'files must be sorted by path, each path once')
      .refine((fs) => fs.every((f, i) => i === fs.length - 1 || !fs[i + 1]!.path.startsWith(`${f.path}/`)), 'a file path is also a folder'),
  })
  .strict()
  .refine((m) => m.exclusive.every((c) => m.provides.includes(c)), { message: 'an exclusive capability must be provided', path: ['exclusive'] });
export type ModuleManifest = z.infer<typeof ModuleManifest>;

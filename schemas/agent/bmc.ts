import { z } from 'zod';
import { SecretRef } from '../ids.ts';

/**
 * How the site agent authenticates to a BMC. `auto` (the default): a Redfish session when the service offers a
 * SessionService, HTTP Basic otherwise, and Basic again when the session login answers 401, 404 or 405 (emulators
 * and BMCs whose SessionService is switched off). `session` and `basic` force one, with no fallback.
 */
export const BmcAuth = z.enum(['auto', 'session', 'basic']);
export type BmcAuth = z.infer<typeof BmcAuth>;

/** PEM CA certificates (a bundle): public data, kept in the log with the node. */
const CaBundle = z
  .string()
  .max(65_536)
  .regex(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/, 'must hold at least one PEM certificate');

/** base64 SHA-256 of the certificate's SubjectPublicKeyInfo (`curl --pinnedpubkey sha256//…` without the prefix). */
export const SpkiSha256 = z.string().regex(/^[A-Za-z0-9+/]{43}=$/, 'must be the base64 SHA-256 of a SubjectPublicKeyInfo');

/**
 * How the site agent trusts an https BMC's certificate; absent: the site's system trust store. `ca`: the chain must
 * verify against this bundle (and the name match the address). `pin`: the certificate's key must hash to this SPKI
 * pin (self-signed BMC certificates; the name is not checked). `insecure`: nothing is verified — lab use only: the
 * site agent logs a warning at every use and the node view shows `bmcTls: insecure`.
 */
export const BmcTls = z.discriminatedUnion('mode', [
  z.object({ mode: z.literal('ca'), caBundle: CaBundle }).strict(),
  z.object({ mode: z.literal('pin'), spkiSha256: SpkiSha256 }).strict(),
  z.object({ mode: z.literal('insecure') }).strict(),
]);
export type BmcTls = z.infer<typeof BmcTls>;

/** The firmware boot mode a boot override asks for (`BootSourceOverrideMode`), where the BMC lets a client set it. */
export const BootMode = z.enum(['UEFI', 'Legacy']);
export type BootMode = z.infer<typeof BootMode>;

/**
 * A BMC address is a Redfish service (`https://10.0.0.21`, `…/redfish/v1`) or one system of it
 * (`https://10.0.0.21/redfish/v1/Systems/2`): a BMC serving several systems must be given the system, and every
 * command for the node drives that system only.
 */
const BmcAddress = z
  // `abort`: the checks below parse the address, which throws on one that is no URL.
  .url({ protocol: /^https?$/, abort: true })
  .refine((address) => /^(\/|\/redfish\/v1\/?|\/redfish\/v1\/Systems\/[^/?#]+\/?)$/i.test(new URL(address).pathname), {
    message: 'must be the BMC (https://host), its Redfish root (/redfish/v1) or one system (/redfish/v1/Systems/<id>)',
  })
  .refine((address) => new URL(address).search === '' && new URL(address).hash === '', { message: 'must carry no query or fragment' });

/**
 * How to reach a node's BMC, as enrolled. Credentials are a reference (`secret:<id>`) the site agent is granted at use;
 * `auth`, `tls` and `bootMode` are the per-node options (see each). TLS options on an `http` address mean the BMC must
 * redirect to https on the same host: nothing but a credential-free request goes over plain http, and any other
 * answer is refused.
 */
export const BmcEndpoint = z
  .object({
    address: BmcAddress,
    credentialsRef: SecretRef,
    auth: BmcAuth.optional(),
    tls: BmcTls.optional(),
    /** Default: the mode the machine's BIOS reports; where it reports none, the BMC's override mode is left as it is. */
    bootMode: BootMode.optional(),
  })
  .strict();
export type BmcEndpoint = z.infer<typeof BmcEndpoint>;

/**
 * The same endpoint as events and agent commands carry it: the shape without the enrolment checks (events recorded
 * before the options existed hold only `address` and `credentialsRef`).
 */
export const BmcConnection = z.object({
  address: z.string(),
  credentialsRef: z.string(),
  auth: BmcAuth.optional(),
  tls: BmcTls.optional(),
  bootMode: BootMode.optional(),
});
export type BmcConnection = z.infer<typeof BmcConnection>;

/** The per-node options of an endpoint, without its address and credentials reference. */
export const BmcOptions = BmcConnection.omit({ address: true, credentialsRef: true });
export type BmcOptions = z.infer<typeof BmcOptions>;

export function bmcOptionsOf(bmc: BmcConnection): BmcOptions {
  return {
    ...(bmc.auth ? { auth: bmc.auth } : {}),
    ...(bmc.tls ? { tls: bmc.tls } : {}),
    ...(bmc.bootMode ? { bootMode: bmc.bootMode } : {}),
  };
}

/**
 * talos: Talos Linux on agentless metal, as a third party would ship it. Talos runs no `bcd`; the control plane only
 * sees the machine through its BMC (site agent, Redfish) and through the Talos API, reached with `httpViaSite`. It
 * imports nothing but the public SDK and zod. Run it as its own service with
 * `better-compute plugin run plugins/talos/index.ts`.
 */
import { z } from 'zod';
import { definePlugin, defineProfile, defineStep, fromInput, httpViaSite, stepNotReady, TerminalError } from 'better-compute/sdk';

/** Talos answers `GET /machine/version` once `machined` is up; anything else means it is still booting. */
const TalosVersion = z.object({ version: z.string().min(1) });

/**
 * Waits until the Talos API of the node answers `/machine/version` with 200, through the site agent. The machine's
 * certificate is self-signed, so the caller pins its SubjectPublicKeyInfo (`tlsSpkiSha256`, base64 SHA-256). Each
 * run sends at most one request and reads the previous one's answer (`poll`), so a booting machine is never flooded.
 */
export const waitTalosReady = defineStep({
  id: 'wait.talosReady',
  runsOn: 'control-plane',
  relays: ['site'],
  sends: ['site.httpProxy'],
  input: z.object({
    port: z.number().int().min(1).max(65_535).default(50_000),
    tlsSpkiSha256: z.string().regex(/^[A-Za-z0-9+/]{43}=$/, 'must be a base64 SHA-256 of the Talos API SubjectPublicKeyInfo'),
  }),
  output: TalosVersion,
  run: async (ctx) => {
    // The first address is the enrolled one or, for a DHCP machine, the lease the BMC reported on its first NIC.
    const address = ctx.node.addresses[0];
    if (!address)
      throw new TerminalError('PRECONDITION_FAILED', `node ${ctx.node.nodeId} has no recorded address; inspect it (or enroll it with addresses) first`);
    const answer = await httpViaSite(ctx, {
      url: `https://${address}:${ctx.input.port}/machine/version`,
      tlsSpkiSha256: ctx.input.tlsSpkiSha256,
      timeoutMs: 5_000,
      poll: true,
      key: 'talos-version',
    });
    if (answer === null) return stepNotReady(`Talos API on ${address} not answering yet`, { retryAfterMs: 1_000 });
    if (answer.status !== 200) return stepNotReady(`Talos API on ${address} answered ${answer.status}`, { retryAfterMs: 1_000 });
    let body: unknown;
    try {
      body = JSON.parse(answer.body);
    } catch {
      throw new TerminalError('VALIDATION_FAILED', `Talos API on ${address} answered 200 with a body that is not JSON`);
    }
    const parsed = TalosVersion.safeParse(body);
    if (!parsed.success) throw new TerminalError('VALIDATION_FAILED', `Talos API on ${address} answered 200 without a version`);
    return { version: parsed.data.version };
  },
});

/**
 * Boots the Talos ISO (`talosIsoUrl`) once from the BMC's virtual CD and waits for the Talos API; everything before
 * the wait goes to the site agent, so the machine never needs a ramdisk. Inputs: `talosIsoUrl`, `talosSpkiSha256`
 * (the pin of the Talos API certificate), `talosPort` (default 50000).
 */
export const talos18 = defineProfile({
  id: 'talos-1.8',
  version: 2,
  target: 'metal',
  role: 'deploy',
  steps: [
    { id: 'media.insert', runsOn: 'site', params: { imageUrl: fromInput('talosIsoUrl') } },
    { id: 'boot.setOnce', runsOn: 'site', params: { target: 'Cd' } },
    { id: 'power.set', runsOn: 'site', params: { action: 'cycle' } },
    {
      id: 'wait.talosReady',
      runsOn: 'control-plane',
      params: { port: fromInput('talosPort', 50_000), tlsSpkiSha256: fromInput('talosSpkiSha256') },
      timeoutMs: 900_000,
      retry: { maxAttempts: 1 },
    },
    // Off the CD for good: a BMC that kept the override as Continuous would boot the installer at every restart.
    { id: 'boot.clear', runsOn: 'site' },
    { id: 'media.eject', runsOn: 'site' },
  ],
});

export const plugin = definePlugin({
  id: 'talos',
  version: '1.0.0',
  steps: [waitTalosReady],
  profiles: [talos18],
  drivers: [{ id: 'talos-api', kind: 'os-api', description: 'Waits for the Talos machine API through the site agent (pinned https)' }],
});

export default plugin;

/**
 * acme-autoinstall: Ubuntu installs over Redfish virtual media, as a third party would ship it. It imports nothing but
 * the public SDK. Run it as its own service with `better-compute plugin run plugins/acme-autoinstall/index.ts`.
 */
import { z } from 'zod';
import { buildIso9660, definePlugin, defineProfile, defineStep, fromInput, fromStep, TerminalError } from 'better-compute/sdk';
import { metaDataTemplate, userDataTemplate } from './userData.ts';

/**
 * Renders the autoinstall seed ISO for this node: a single-use `node` join token bound to the machine's SMBIOS UUID
 * goes into `late-commands`, the ISO is stored by its sha256, and only its capability URL leaves the step.
 */
export const renderIso = defineStep({
  id: 'autoinstall.renderIso',
  runsOn: 'control-plane',
  input: z.object({
    hostname: z
      .string()
      .regex(/^[a-z0-9-]{1,63}$/)
      .optional(),
    sshKeys: z.array(z.string()).default([]),
  }),
  output: z.object({ url: z.string().url(), sha256: z.string().regex(/^[0-9a-f]{64}$/) }),
  run: async (ctx) => {
    const productUuid = ctx.node.productUuid;
    if (!productUuid) throw new TerminalError('PRECONDITION_FAILED', `node ${ctx.node.nodeId} has no SMBIOS UUID yet; inspect it first`);
    const joinToken = await ctx.pki.mintJoinToken({ role: 'node', expect: { productUuid } });
    const values = {
      hostname: ctx.input.hostname ?? ctx.node.nodeId,
      sshKeys: ctx.input.sshKeys,
      siteId: ctx.node.siteId,
      nodeId: ctx.node.nodeId,
      natsUrl: ctx.agentEndpoints.natsUrl,
      joinCredsUrl: ctx.agentEndpoints.joinCredsUrl,
      joinToken,
    };
    const iso = buildIso9660({
      volumeId: 'cidata',
      files: [
        { name: 'user-data', content: ctx.renderTemplate(userDataTemplate, values) },
        { name: 'meta-data', content: ctx.renderTemplate(metaDataTemplate, values) },
      ],
    });
    const stored = await ctx.blobs.put(iso, { name: `${ctx.node.nodeId}-autoinstall.iso` });
    ctx.log.info({ sha256: stored.sha256, size: stored.size }, 'autoinstall seed ISO stored');
    return { url: stored.url, sha256: stored.sha256 };
  },
});

/** Mount the seed, boot it once, wait for the installed host's agent, end the CD boot and take the media out again. */
export const ubuntuAutoinstall = defineProfile({
  id: 'ubuntu-24.04-autoinstall',
  version: 2,
  target: 'metal',
  role: 'deploy',
  steps: [
    { id: 'autoinstall.renderIso', runsOn: 'control-plane', params: { sshKeys: fromInput('sshKeys', []) } },
    { id: 'media.insert', runsOn: 'site', params: { imageUrl: fromStep('autoinstall.renderIso', 'url') } },
    { id: 'boot.setOnce', runsOn: 'site', params: { target: 'Cd' } },
    { id: 'power.set', runsOn: 'site', params: { action: 'cycle' } },
    { id: 'wait.agentJoined', runsOn: 'control-plane', params: { role: 'node' }, timeoutMs: 1_800_000, retry: { maxAttempts: 1 } },
    // Off the CD for good: a BMC that kept the override as Continuous would boot the seed at every restart.
    { id: 'boot.clear', runsOn: 'site' },
    { id: 'media.eject', runsOn: 'site' },
  ],
});

export const plugin = definePlugin({
  id: 'acme-autoinstall',
  version: '1.0.0',
  steps: [renderIso],
  profiles: [ubuntuAutoinstall],
  drivers: [{ id: 'redfish-virtual-media', kind: 'boot-media', description: 'Boots seed ISOs through Redfish VirtualMedia' }],
});

export default plugin;

import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineProvider } from '../../plugins/sdk/provider.ts';
import { providerManifestOf } from '../../plugins/sdk/providerManifest.ts';
import { CreateProviderAccount } from '../../schemas/vps/accountCommands.ts';
import { ProviderAccountShape, accountShapeIssues } from '../../schemas/vps/providerAccountShape.ts';
import { accountAggregate } from '../../services/vps/account/account.ts';
import { createProviderAccount } from '../../services/vps/account/create.ts';
import { hetznerCloudProvider } from '../../plugins/hetzner-cloud/index.ts';
import { proxmoxVeProvider } from '../../plugins/proxmox-ve/index.ts';
import { thrownCode } from '../support/thrownCode.ts';

const provider = (configSchema: z.ZodType) => defineProvider({ id: 'p', configSchema, create: () => ({}) as never });
const secret = { exists: true, secretId: 'tok', kind: 'provider-token', version: 1, sealed: {}, keyId: 'k', description: null } as never;

describe('provider account shapes', () => {
  it('the SDK registers a provider with its configSchema as the account shape; a named extension without one has none', () => {
    const manifest = providerManifestOf(hetznerCloudProvider);
    expect(manifest.id).toBe('hetzner-cloud');
    expect(ProviderAccountShape.parse(manifest.account)).toMatchObject({ type: 'object', required: ['region'], additionalProperties: false });
    expect(providerManifestOf({ id: 'just-a-name' })).toEqual({ id: 'just-a-name' });
    // Proxmox VE has no public endpoint to default to: an account must name its cluster's.
    const proxmox = providerManifestOf(proxmoxVeProvider).account!;
    expect(accountShapeIssues(proxmox, { region: 'pve1' })).toEqual([{ path: 'endpoint', message: 'expected string' }]);
    expect(accountShapeIssues(proxmox, { region: 'pve1', endpoint: 'https://pve.example:8006/api2/json' })).toEqual([]);
  });

  it('a configSchema that is not an object schema is refused when the plugin registers, naming the provider', () => {
    expect(() => providerManifestOf(provider(z.string()))).toThrow(
      expect.objectContaining({ code: 'VALIDATION_FAILED', message: expect.stringMatching(/^provider p:/) }),
    );
  });

  it('lists every failing path with what was expected, never the value given', () => {
    const shape = providerManifestOf(provider(z.object({ endpoint: z.url(), region: z.enum(['fra1', 'ams1']), port: z.number().int().min(1) }))).account!;
    const issues = accountShapeIssues(shape, { endpoint: 'sekret-value', region: 'sekret-region', port: 0, extra: 'sekret-extra' });
    expect(issues.map((i) => i.path).sort()).toEqual(['endpoint', 'extra', 'port', 'region']);
    expect(JSON.stringify(issues)).not.toMatch(/sekret/);
    expect(issues.find((i) => i.path === 'region')?.message).toBe('not one of "fra1", "ams1"');
    expect(accountShapeIssues(shape, { endpoint: 'https://x.example', region: 'fra1', port: 443 })).toEqual([]);
  });

  it('vps.createProviderAccount refuses an account that does not fit the registered shape, before anything else, and checks nothing without one', () => {
    const manifest = providerManifestOf(hetznerCloudProvider);
    const command = (config: Record<string, string>, region = 'fsn1') =>
      CreateProviderAccount.parse({ accountId: 'a', providerId: 'hetzner-cloud', region, config, tokenSecretId: 'tok' });
    const ctx = (provider: typeof manifest | undefined) => ({ commandId: 'c1', actor: 't', now: '2026-01-01T00:00:00Z', dependencies: { secret, provider } });
    expect(thrownCode(() => createProviderAccount.decide(command({}, 'FSN 1'), accountAggregate.initialState, ctx(manifest)))).toBe(
      'PROVIDER_CREDENTIALS_INVALID',
    );
    expect(thrownCode(() => createProviderAccount.decide(command({ endpoint: 'nope' }), accountAggregate.initialState, ctx(manifest)))).toBe(
      'PROVIDER_CREDENTIALS_INVALID',
    );
    expect(createProviderAccount.decide(command({}), accountAggregate.initialState, ctx(manifest))).toHaveLength(1);
    expect(createProviderAccount.decide(command({ endpoint: 'nope' }), accountAggregate.initialState, ctx(undefined))).toHaveLength(1);
  });
});

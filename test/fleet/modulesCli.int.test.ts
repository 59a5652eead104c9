import { generateKeyPairSync } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../support/cliRunner.ts';
import { describe, expect, it } from 'vitest';
import { moduleAggregate } from '../../services/fleet/module/module.ts';
import { startApi } from '../support/apiFixture.ts';
import { source } from './bundleFixture.ts';

const cli = (api: string, dataDir: string, ...args: string[]) => runCli(api, dataDir, args);

describe('better-compute modules pack | publish', () => {
  it('packs a folder with a PEM key, publishes the bundle once, and reports a second publish by its code', { timeout: 90_000 }, async () => {
    await using env = await startApi();
    await env.app.listen({ port: 0, host: '127.0.0.1' });
    const api = `http://127.0.0.1:${(env.app.server.address() as { port: number }).port}`;
    const work = mkdtempSync(join(tmpdir(), 'bc-modules-cli-'));
    try {
      const { privateKey, publicKey } = generateKeyPairSync('ed25519');
      writeFileSync(join(work, 'acme.pem'), privateKey.export({ format: 'pem', type: 'pkcs8' }));
      const raw = Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url').toString('base64');
      await env.bus.execute({ name: 'pki.registerPublisher', payload: { publisherId: 'acme', publicKey: raw }, actor: 'test' });
      mkdirSync(join(work, 'mod', 'files'), { recursive: true });
      writeFileSync(join(work, 'mod', 'module.json'), JSON.stringify(source({ name: 'hello', version: '0.1.0' })));
      writeFileSync(join(work, 'mod', 'files', 'hello'), 'hi\n');
      const out = join(work, 'hello.tar');

      const packed = await cli(api, env.dataDir, 'modules', 'pack', join(work, 'mod'), '--key', join(work, 'acme.pem'), '--publisher', 'acme', '--out', out);
      expect(packed.code, packed.stderr).toBe(0);
      expect(packed.stdout).toMatch(/hello 0\.1\.0 → .*hello\.tar \(sha256 [0-9a-f]{64}\)/);
      const published = await cli(api, env.dataDir, 'modules', 'publish', out);
      expect(published.code, published.stderr).toBe(0);
      expect(published.stdout).toMatch(/published hello 0\.1\.0 \(manifest [0-9a-f]{64}\)/);
      expect((await env.bus.repository.load(moduleAggregate, 'hello')).state.versions.map((v) => v.version)).toEqual(['0.1.0']);

      await env.readers.get('modules')!.waitFor(await env.store.streamLastSequence(), 5_000);
      expect((await cli(api, env.dataDir, 'modules', 'ls')).stdout).toMatch(/hello\s+1\s+0\.1\.0/);
      expect((await cli(api, env.dataDir, 'modules', 'show', 'hello')).stdout).toMatch(/0\.1\.0\s+acme\s+[0-9a-f]{64}\s+1\s+dns\s+no/);

      const again = await cli(api, env.dataDir, 'modules', 'publish', out);
      expect(again.code).toBe(1);
      expect(again.stderr).toMatch(/error MODULE_VERSION_EXISTS/);
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  });
});

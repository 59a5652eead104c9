import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { AgentError } from '../../daemon/agent/errors.ts';
import { fileCredentialResolver } from '../../daemon/site/credentials.ts';

const dirs: string[] = [];
const fileWith = (entries: unknown): string => {
  const dir = mkdtempSync(join(tmpdir(), 'bc-creds-'));
  dirs.push(dir);
  const path = join(dir, 'credentials.json');
  writeFileSync(path, JSON.stringify(entries));
  return path;
};
const codeOf = (promise: Promise<unknown>) =>
  promise.then(
    () => 'resolved',
    (err: unknown) => (err instanceof AgentError ? err.code : err),
  );

afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('fileCredentialResolver', () => {
  it('resolves a reference from the file', async () => {
    const resolver = fileCredentialResolver(fileWith({ 'secret:a': { username: 'admin', password: 'pw-a' } }));
    await expect(resolver.resolve('secret:a')).resolves.toEqual({ username: 'admin', password: 'pw-a' });
  });

  it('answers an edit of the file without a restart, after answering from the file as it was', async () => {
    const path = fileWith({ 'secret:a': { username: 'admin', password: 'old' } });
    const resolver = fileCredentialResolver(path);
    await expect(resolver.resolve('secret:a')).resolves.toEqual({ username: 'admin', password: 'old' });
    writeFileSync(path, JSON.stringify({ 'secret:a': { username: 'admin', password: 'rotated' }, 'secret:b': { username: 'b', password: 'pw-b' } }));
    await expect(resolver.resolve('secret:a')).resolves.toEqual({ username: 'admin', password: 'rotated' });
    await expect(resolver.resolve('secret:b')).resolves.toEqual({ username: 'b', password: 'pw-b' });
  });

  it('refuses an unknown reference, a removed file and an invalid one with CREDENTIALS_MISSING', async () => {
    const path = fileWith({ 'secret:a': { username: 'admin', password: 'pw-a' } });
    const resolver = fileCredentialResolver(path);
    expect(await codeOf(resolver.resolve('secret:nope'))).toBe('CREDENTIALS_MISSING');
    writeFileSync(path, '{ not json');
    expect(await codeOf(resolver.resolve('secret:a'))).toBe('CREDENTIALS_MISSING');
    rmSync(path);
    expect(await codeOf(resolver.resolve('secret:a'))).toBe('CREDENTIALS_MISSING');
  });

  it('names the reference in its error, never the password', async () => {
    const resolver = fileCredentialResolver(fileWith({ 'secret:a': { username: 'admin', password: 'hunter2-secret' } }));
    const err = await resolver.resolve('secret:b').catch((e: unknown) => e as Error);
    expect(String((err as Error).message)).toContain('secret:b');
    expect(String((err as Error).message)).not.toContain('hunter2-secret');
  });
});

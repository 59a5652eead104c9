import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { startApi } from '../support/apiFixture.ts';

const bin = fileURLToPath(new URL('../../scripts/better-compute.mjs', import.meta.url));
const run = promisify(execFile);

async function cli(api: string, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [bin, '--api', api, ...args]);
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe('better-compute CLI', () => {
  it('enrolls, lists and shows nodes through the HTTP API, and reports coded errors', async () => {
    await using env = await startApi();
    await env.app.listen({ port: 0, host: '127.0.0.1' });
    const api = `http://127.0.0.1:${(env.app.server.address() as { port: number }).port}`;

    expect((await cli(api, 'command', 'site.create', '{"siteId":"dc1","name":"DC 1"}')).stdout).toMatch(/appended at seq 1: SiteCreated/);
    const enrolled = await cli(api, 'metal', 'enroll', '--node', 'r1-n1', '--site', 'dc1', '--bmc', 'https://127.0.0.1:9', '--credentials', 'secret:r1-n1', '--profile', 'dl325', '--mac', '52:54:00:00:00:01');
    expect(enrolled.stdout).toMatch(/enrolled r1-n1 \(seq 2\)/);
    await env.readers.get('nodes')!.waitFor(2, 5_000);
    const ls = await cli(api, 'nodes', 'ls', '--site', 'dc1');
    expect(ls.stdout).toMatch(/NODEID\s+SITEID\s+STATE/);
    expect(ls.stdout).toMatch(/r1-n1\s+dc1\s+enrolled/);
    expect(JSON.parse((await cli(api, '--json', 'nodes', 'show', 'r1-n1')).stdout)).toMatchObject({ nodeId: 'r1-n1', state: 'enrolled' });
    expect((await cli(api, 'events', 'metal.node/r1-n1')).stdout).toMatch(/NodeEnrolled/);

    const missing = await cli(api, 'nodes', 'show', 'nope');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/error NOT_FOUND: node nope not found/);
    const invalid = await cli(api, 'command', 'site.create', '{"siteId":"Bad Id"}');
    expect(invalid.stderr).toMatch(/error VALIDATION_FAILED/);
    expect(invalid.stderr).toMatch(/siteId: /);
  });
});

import { jetstream } from '@nats-io/jetstream';
import { runCli } from '../support/cliRunner.ts';
import { describe, expect, it } from 'vitest';
import { startApi } from '../support/apiFixture.ts';
import { waitForCheckpoint } from '../properties/harness.ts';

const cli = (api: string, dataDir: string, ...args: string[]) => runCli(api, dataDir, args);

describe('better-compute CLI', () => {
  it('enrolls, lists and shows nodes through the HTTP API, and reports coded errors', async () => {
    await using env = await startApi();
    await env.app.listen({ port: 0, host: '127.0.0.1' });
    const api = `http://127.0.0.1:${(env.app.server.address() as { port: number }).port}`;

    // Seq 1 is the bootstrap admin token the API created on the fresh log.
    expect((await cli(api, env.dataDir, 'command', 'site.create', '{"siteId":"dc1","name":"DC 1"}')).stdout).toMatch(/appended at seq 2: SiteCreated/);
    // A lab BMC behind a chassis manager: one system of it, its certificate not verified, Basic auth, Legacy boot.
    const enrolled = await cli(
      api,
      env.dataDir,
      'metal',
      'enroll',
      '--node',
      'r1-n1',
      '--site',
      'dc1',
      '--bmc',
      'https://127.0.0.1:9/redfish/v1/Systems/2',
      '--credentials',
      'secret:r1-n1',
      '--profile',
      'default',
      '--mac',
      '52:54:00:00:00:01',
      '--bmc-insecure',
      '--bmc-auth',
      'basic',
      '--boot-mode',
      'Legacy',
    );
    expect(enrolled.stdout).toMatch(/enrolled r1-n1 \(seq 3\)/);
    await env.readers.get('nodes')!.waitFor(3, 5_000);
    const ls = await cli(api, env.dataDir, 'nodes', 'ls', '--site', 'dc1');
    expect(ls.stdout).toMatch(/NODEID\s+SITEID\s+STATE/);
    expect(ls.stdout).toMatch(/r1-n1\s+dc1\s+enrolled/);
    expect(JSON.parse((await cli(api, env.dataDir, '--json', 'nodes', 'show', 'r1-n1')).stdout)).toMatchObject({
      nodeId: 'r1-n1',
      state: 'enrolled',
      bmcTls: 'insecure',
      bmcAuth: 'basic',
      bmcBootMode: 'Legacy',
    });
    expect((await cli(api, env.dataDir, 'events', 'metal.node/r1-n1')).stdout).toMatch(/NodeEnrolled/);

    // `metal remediate` sends metal.remediate: an enrolled node is not at rest in a state it could return to.
    const remediate = await cli(api, env.dataDir, 'metal', 'remediate', 'r1-n1', '--profile', 'bmc-check');
    expect(remediate.stderr).toMatch(/error ILLEGAL_TRANSITION: metal.remediate is not allowed in state enrolled/);

    const missing = await cli(api, env.dataDir, 'nodes', 'show', 'nope');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/error NOT_FOUND: node nope not found/);
    const invalid = await cli(api, env.dataDir, 'command', 'site.create', '{"siteId":"Bad Id"}');
    expect(invalid.stderr).toMatch(/error VALIDATION_FAILED/);
    expect(invalid.stderr).toMatch(/siteId: /);

    const { stdout: withoutToken, stderr: refused } = await cli(api, '/nonexistent', 'nodes', 'ls');
    expect(withoutToken).toBe('');
    expect(refused).toMatch(/error UNAUTHENTICATED/);
  });

  it('lists dead letters and marks them handled', async () => {
    await using env = await startApi();
    await env.app.listen({ port: 0, host: '127.0.0.1' });
    const api = `http://127.0.0.1:${(env.app.server.address() as { port: number }).port}`;
    const poison = await jetstream(env.nc).publish('bc.evt.metal.node.x', '{"not":"an event batch"}');
    await waitForCheckpoint(env.projectors.get('nodes')!, poison.seq);

    const ls = await cli(api, env.dataDir, 'dead-letters', 'ls', '--consumer', 'projectors');
    expect(ls.stdout).toMatch(/CONSUMER\s+STREAM\s+STREAMSEQ\s+SUBJECT\s+REASON/);
    expect(ls.stdout).toMatch(new RegExp(`projectors\\s+BC_EVENTS\\s+${poison.seq}\\s+bc\\.evt\\.metal\\.node\\.x\\s+MAC_MISSING`));
    expect((await cli(api, env.dataDir, 'dead-letters', 'handle', '--consumer', 'projectors')).stdout).toMatch(/marked 1 dead letter\(s\) handled/);
    expect(JSON.parse((await cli(api, env.dataDir, '--json', 'dead-letters', 'ls', '--consumer', 'projectors')).stdout)).toEqual({ items: [] });
    expect((await cli(api, env.dataDir, 'dead-letters', 'ls', '--handled')).stdout).toMatch(
      new RegExp(`projectors\\s+BC_EVENTS\\s+${poison.seq}\\s.*token:bootstrap-admin`),
    );
  });
});

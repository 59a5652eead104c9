import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { newNonce } from '../../schemas/agent/agentCommand.ts';
import { startApi } from '../support/apiFixture.ts';
import { deployBody, enrollPayload } from '../support/commandPayloads.ts';

/** The raw text of an SSE stream until it contains `until` (or `timeoutMs` passed). */
function readStream(url: string, headers: Record<string, string>, until: string, timeoutMs = 15_000): { connected: Promise<void>; text: Promise<string> } {
  let onConnected!: () => void;
  const connected = new Promise<void>((r) => (onConnected = r));
  const text = new Promise<string>((resolve, reject) => {
    let buffer = '';
    const req = request(url, { headers }, (res) => {
      res.on('data', (chunk: Buffer) => {
        buffer += chunk.toString();
        if (buffer.includes(': connected')) onConnected();
        if (buffer.includes(until)) {
          req.destroy();
          resolve(buffer);
        }
      });
    });
    setTimeout(() => {
      req.destroy();
      resolve(buffer);
    }, timeoutMs);
    req.on('error', (err) => (err.message.includes('aborted') ? undefined : reject(err)));
    req.end();
  });
  return { connected, text };
}

describe('attempt nonces and tenants', () => {
  it(
    "a tenant read its workflow's attempt nonce in StepStarted and could compute the result subject of its wipe (regression): no tenant read shows a nonce",
    { timeout: 60_000 },
    async () => {
      await using env = await startApi();
      await env.app.listen({ port: 0, host: '127.0.0.1' });
      const { port } = env.app.server.address() as { port: number };
      const { app, bus } = env;
      await bus.execute({ name: 'site.create', payload: { siteId: 'dc1', name: 'DC 1' }, actor: 'test' });
      await bus.execute({ name: 'metal.enroll', payload: enrollPayload('n1'), actor: 'test' });
      const inspection = await bus.execute({ name: 'metal.startInspection', payload: { nodeId: 'n1' }, actor: 'test' });
      const inspectionId = (inspection.events[0]!.data as { workflowId: string }).workflowId;
      await bus.execute({ name: 'metal.completeOperation', payload: { nodeId: 'n1', workflowId: inspectionId }, actor: 'test' });
      const tenant = (await app.inject({ method: 'POST', url: '/v1/tokens', payload: { tokenId: 'acme', role: 'tenant', tenantId: 'acme' } })).json()
        .token as string;
      const asTenant = { authorization: `Bearer ${tenant}` };
      const deploy = await app.inject({ method: 'POST', url: '/v1/commands/metal.deploy', payload: deployBody('n1'), headers: asTenant });
      expect(deploy.statusCode).toBe(201);
      const workflowId = (deploy.json().events[0].data as { workflowId: string }).workflowId;
      const { nodeId: _n, ...inputs } = deployBody('n1');
      await bus.execute({ name: 'workflow.start', payload: { workflowId, nodeId: 'n1', siteId: 'dc1', operation: 'deploy', inputs }, actor: 'engine' });

      const live = readStream(`http://127.0.0.1:${port}/v1/events/stream?subject=bc.evt.metal.>`, asTenant, '"StepStarted"');
      await live.connected;
      // What the executor records when it starts the attempt: the nonce every command of the attempt derives from.
      const nonce = newNonce();
      const started = await bus.execute({ name: 'workflow.startStep', payload: { workflowId, stepIndex: 0, attempt: 1, nonce }, actor: 'engine' });
      await env.readers.get('nodes')!.waitFor(started.seq, 5_000);
      await env.readers.get('workflows')!.waitFor(started.seq, 5_000);

      // The log keeps it, and an operator sees it.
      const history = await app.inject({ url: `/v1/events?aggregate=metal.workflow/${workflowId}` });
      expect(history.json().items.find((e: { type: string }) => e.type === 'StepStarted')).toMatchObject({ data: { nonce } });

      // The tenant whose workflow it is sees the step start, and no nonce: not in the history, the stream or any read.
      const mine = await app.inject({ url: `/v1/events?aggregate=metal.workflow/${workflowId}`, headers: asTenant });
      expect(mine.statusCode).toBe(200);
      const stepStarted = mine.json().items.find((e: { type: string }) => e.type === 'StepStarted');
      expect(stepStarted).toMatchObject({ data: { workflowId, stepIndex: 0, attempt: 1 } });
      expect(stepStarted.data).not.toHaveProperty('nonce');
      const reads = [
        mine.body,
        await live.text,
        (await app.inject({ url: `/v1/workflows/${workflowId}`, headers: asTenant })).body,
        (await app.inject({ url: '/v1/nodes/n1/history', headers: asTenant })).body,
        (await app.inject({ url: '/v1/nodes/n1/workflows', headers: asTenant })).body,
        (await app.inject({ url: '/v1/nodes/n1', headers: asTenant })).body,
      ];
      expect(reads[1]).toContain('"StepStarted"');
      for (const body of reads) expect(body).not.toContain(nonce);
    },
  );
});

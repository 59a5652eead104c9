import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ErrorCodes, isErrorCode } from '../../schemas/errorCodes.ts';
import { serveCommands } from '../../services/commands/commandResponder.ts';
import { allCommands, operatorCommands } from '../../services/api/commandCatalog.ts';
import { PlatformError } from '../../schemas/platformError.ts';
import { WorkflowExecutor } from '../../services/workflow/executor.ts';
import { loadWorkflowConfig } from '../../services/workflow/config.ts';
import { hostilePayload } from '../arbitraries/hostilePayload.ts';
import { startApi } from '../support/apiFixture.ts';

/** Bodies a client could send: any JSON, JSON-ish text that is not JSON, and oversized or odd strings. */
const body = fc.oneof(
  fc.jsonValue().map((v) => ({ payload: JSON.stringify(v) ?? 'null', type: 'application/json' })),
  fc.string().map((s) => ({ payload: `{${s}`, type: 'application/json' })),
  fc
    .string({ minLength: 0, maxLength: 40 })
    .map((s) => ({ payload: s, type: fc.sample(fc.constantFrom('text/plain', 'application/xml', 'application/x-www-form-urlencoded'), 1)[0]! })),
  fc
    .record({ nodeId: fc.string({ maxLength: 2_000 }), siteId: fc.string(), tenantId: fc.string() })
    .map((v) => ({ payload: JSON.stringify(v), type: 'application/json' })),
  fc.constant({ payload: JSON.stringify({ name: 'x'.repeat(1_100_000) }), type: 'application/json' }),
);

describe('command fuzzing', () => {
  it('answers every malformed command body, over HTTP and NATS, with a coded 4xx refusal and appends nothing', { timeout: 60_000 }, async () => {
    await using env = await startApi();
    const responder = serveCommands(env.nc, env.bus, env.log);
    try {
      const before = await env.store.streamLastSequence();
      const names = operatorCommands.map((c) => c.name);
      await fc.assert(
        fc.asyncProperty(fc.constantFrom(...names), body, async (name, { payload, type }) => {
          const res = await env.app.inject({ method: 'POST', url: `/v1/commands/${name}`, payload, headers: { 'content-type': type } });
          expect(res.statusCode, `${name} ${payload.slice(0, 200)}`).toBeGreaterThanOrEqual(400);
          expect(res.statusCode).toBeLessThan(500);
          expect(isErrorCode(res.json().code)).toBe(true);
        }),
        { numRuns: 150 },
      );
      // The same garbage as NATS requests to every command subject, the engine's included.
      await fc.assert(
        fc.asyncProperty(fc.constantFrom(...env.bus.names()), fc.uint8Array({ maxLength: 300 }), async (name, bytes) => {
          const reply = await env.nc.request(`bc.cmd.${name}`, bytes, { timeout: 5_000 });
          const answer = JSON.parse(new TextDecoder().decode(reply.data)) as { ok: boolean; error?: { code: string; status: number } };
          expect(answer.ok).toBe(false);
          expect(isErrorCode(answer.error!.code)).toBe(true);
          expect(answer.error!.status).toBeLessThan(500);
        }),
        { numRuns: 100 },
      );
      expect(await env.store.streamLastSequence()).toBe(before);
    } finally {
      responder.unsubscribe();
    }
  });

  it('answers bodies shaped like each command with hostile values in every field with a coded refusal, never a 5xx', { timeout: 120_000 }, async () => {
    await using env = await startApi();
    // Every HTTP command through its route, as a client sends it.
    for (const command of operatorCommands) {
      await fc.assert(
        fc.asyncProperty(hostilePayload(command.schema), async (payload) => {
          const before = await env.store.streamLastSequence();
          const res = await env.app.inject({
            method: 'POST',
            url: `/v1/commands/${command.name}`,
            payload: JSON.stringify(payload),
            headers: { 'content-type': 'application/json' },
          });
          const what = `${command.name} ${JSON.stringify(payload).slice(0, 300)}: ${res.body.slice(0, 300)}`;
          expect(res.statusCode, what).toBeLessThan(500);
          if (res.statusCode < 400) return;
          const { code } = res.json<{ code: string }>();
          expect(isErrorCode(code), what).toBe(true);
          expect(ErrorCodes[code as keyof typeof ErrorCodes].status, what).toBe(res.statusCode);
          expect(await env.store.streamLastSequence(), what).toBe(before);
        }),
        { numRuns: 40 },
      );
    }
    // The others on the bus their responders and services run them on (the NATS responder decodes and hands them over).
    for (const command of allCommands.filter((c) => !operatorCommands.includes(c))) {
      await fc.assert(
        fc.asyncProperty(hostilePayload(command.schema), async (payload) => {
          const before = await env.store.streamLastSequence();
          const refusal = await env.bus.execute({ name: command.name, payload, actor: 'test:fuzz' }).then(
            () => undefined,
            (err: unknown) => err,
          );
          if (refusal === undefined) return;
          const what = `${command.name} ${JSON.stringify(payload).slice(0, 300)}: ${refusal instanceof Error ? refusal.message : JSON.stringify(refusal)}`;
          expect(refusal, what).toBeInstanceOf(PlatformError);
          expect((refusal as PlatformError).status, what).toBeLessThan(500);
          expect(await env.store.streamLastSequence(), what).toBe(before);
        }),
        { numRuns: 40 },
      );
    }
  });

  it('never accepts garbage on agent result subjects as a step outcome', { timeout: 60_000 }, async () => {
    await using env = await startApi();
    const executor = new WorkflowExecutor(env.nc, env.store, loadWorkflowConfig(), env.log);
    await executor.start();
    try {
      const before = await env.store.streamLastSequence();
      await fc.assert(
        fc.asyncProperty(
          fc.stringMatching(/^[a-z0-9][a-z0-9-]{0,10}$/),
          fc.oneof(
            fc.uint8Array({ maxLength: 400 }),
            fc.jsonValue().map((v) => new TextEncoder().encode(JSON.stringify(v) ?? '')),
          ),
          async (id, bytes) => {
            env.nc.publish(`bc.site.dc1.res.n1.wf-000000000000-s0-a${id}`, bytes);
          },
        ),
        { numRuns: 100 },
      );
      await env.nc.flush();
      await new Promise((r) => setTimeout(r, 500));
      expect(await env.store.streamLastSequence()).toBe(before);
      // The API still answers: nothing crashed.
      expect((await env.app.inject({ url: '/v1/nodes' })).statusCode).toBe(200);
    } finally {
      await executor.stop();
    }
  });
});

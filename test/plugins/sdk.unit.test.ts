import { describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
// Written as an outside package would: only the public entry.
import { defineProfile, defineStep, httpViaSite, StepNotReadyError, stepNotReady } from 'better-compute/sdk';

describe('better-compute/sdk', () => {
  it('defines steps with literal ids, defaults filled in, and frozen', () => {
    const step = defineStep({
      id: 'acme.waitForApi',
      runsOn: 'control-plane',
      relays: ['site'],
      sends: ['site.httpProxy'],
      input: z.object({ port: z.number().int() }),
      output: z.object({ version: z.string() }),
      run: async (ctx) => {
        const answer = await httpViaSite(ctx, {
          url: `https://10.0.5.21:${ctx.input.port}/version`,
          tlsSpkiSha256: 'A'.repeat(43) + '=',
          key: 'version',
          poll: true,
        });
        if (!answer || answer.status !== 200) stepNotReady('API not answering yet');
        return { version: answer.body };
      },
    });
    expectTypeOf(step.id).toEqualTypeOf<'acme.waitForApi'>();
    expect(step).toMatchObject({ id: 'acme.waitForApi', destructive: false, sends: ['site.httpProxy'], relays: ['site'] });
    expect(Object.isFrozen(step)).toBe(true);
    expect(defineStep({ id: 'acme.noop', runsOn: 'control-plane', input: z.object({}), run: async () => null })).toMatchObject({
      destructive: false,
      sends: [],
      relays: [],
      output: undefined,
    });

    const profile = defineProfile({
      id: 'acme-profile',
      version: 1,
      target: 'metal',
      role: 'deploy',
      steps: [{ id: step.id, runsOn: 'control-plane', params: { port: 50000 } }],
    });
    expectTypeOf(profile.id).toEqualTypeOf<'acme-profile'>();
    expect(() => stepNotReady('later', { retryAfterMs: 500 })).toThrow(StepNotReadyError);
  });
});

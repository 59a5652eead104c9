import { connect } from '@nats-io/transport-node';
import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { identityOf } from '../../daemon/agent/identity.ts';
import { registrationOf, sendRegistration } from '../../daemon/agent/registration.ts';
import { ephemeralKeyPair } from '../../schemas/ephemeralKey.ts';
import { decryptGrant, signGrantRequest } from '../../schemas/secrets/grantCodec.ts';
import type { SecretGrantReply } from '../../schemas/secrets/grant.ts';
import { sealingAad } from '../../schemas/secrets/sealed.ts';
import type { ExistingWorkflow } from '../../schemas/metal/workflowState.ts';
import { Streams, Subjects } from '../../schemas/subjects.ts';
import { workflowAggregate } from '../../services/workflow/workflow/workflow.ts';
import { startGrantService } from '../../services/secrets/grantService.ts';
import { loadMasterKey } from '../../services/secrets/masterKey.ts';
import { seal } from '../../services/secrets/sealing.ts';
import { startRegistrationService } from '../../services/trust/agent/registrationService.ts';
import { enrollPayload, deployPayload, startEngine } from '../metal/engineFixture.ts';
import { startFakeAgent } from '../metal/fakeAgent.ts';
import { startBackbone } from '../support/backboneFixture.ts';

const PASSWORD = 'bmc-password-of-dc9';

describe('BC_NATS_AUTH=none', () => {
  it('gives the first anonymous agent of a site no BMC password: grants are refused outright', { timeout: 60_000 }, async () => {
    await using env = await startBackbone({ projectors: false });
    const masterKey = loadMasterKey(env.config);
    const registrations = startRegistrationService(env.nc, env.store, env.log);
    const grants = startGrantService(env.nc, env.store, masterKey, env.log, { natsAuth: 'none' });
    const attacker = await connect({ servers: env.nats.url });
    try {
      // An operator sets up a site whose agent has not registered yet, with a node and its sealed BMC password.
      const send = (name: string, payload: unknown) => env.bus.execute({ name, payload, actor: 'test' });
      await send('site.create', { siteId: 'dc9', name: 'DC 9' });
      await send('secrets.put', {
        secretId: 'n9-bmc',
        kind: 'bmc',
        version: 1,
        sealed: seal(JSON.stringify({ username: 'root', password: PASSWORD }), masterKey, sealingAad('n9-bmc', 1)),
      });
      await send('metal.enroll', { ...enrollPayload('n9', 'dc9'), bmc: { address: 'https://127.0.0.1:9', credentialsRef: 'secret:n9-bmc' } });

      // Anyone who reaches the server registers the site's agent id first, with a key of its own (nothing binds it)...
      const identity = identityOf(generateKeyPairSync('ed25519').privateKey);
      await sendRegistration(attacker, registrationOf(identity, { agentId: 'site-dc9', role: 'site', siteId: 'dc9' }));
      // ...and asks for the node's BMC credentials with a request that key signed.
      const ephemeral = ephemeralKeyPair();
      const signed = signGrantRequest(
        { agentId: 'site-dc9', nodeId: 'n9', ref: 'secret:n9-bmc', ephemeralPublicKey: ephemeral.publicKeyBase64, issuedAt: new Date().toISOString() },
        identity,
      );
      const reply = (await attacker.request(Subjects.secretGrant, JSON.stringify(signed), { timeout: 5_000 })).json<SecretGrantReply>();
      const leaked = reply.ok ? decryptGrant(reply.grant, ephemeral.privateKey, signed, 'site-dc9').toString('utf8') : '';
      expect([reply.ok ? 'granted' : reply.error.code, leaked.includes(PASSWORD)]).toEqual(['BROKER_AUTH_REQUIRED', false]);
    } finally {
      await attacker.close();
      await grants.stop();
      await registrations.stop();
    }
  });

  it('refuses deploys and retirements at their first step: no image or wipe is ever sent for anyone to answer', { timeout: 120_000 }, async () => {
    await using env = await startEngine({}, { natsAuth: 'none' });
    await using _agent = await startFakeAgent(env.nc, 'dc1');
    await env.bus.execute({ name: 'site.create', payload: { siteId: 'dc1', name: 'DC 1' }, actor: 'test' });
    for (const nodeId of ['n1', 'n2']) await env.bus.execute({ name: 'metal.enroll', payload: enrollPayload(nodeId), actor: 'test' });
    // Inspection attests nothing: it still runs.
    for (const nodeId of ['n1', 'n2']) await env.waitForNode(nodeId, (s) => s.exists && s.state === 'ready');
    const agentCommands = async () => (await env.store.jsm.streams.info(Streams.agentCommands.name)).state.messages;
    const sentBefore = await agentCommands();

    const operations = [
      await env.bus.execute({ name: 'metal.deploy', payload: deployPayload('n1'), actor: 'test' }),
      await env.bus.execute({ name: 'metal.retire', payload: { nodeId: 'n2' }, actor: 'test' }),
    ];
    for (const nodeId of ['n1', 'n2']) await env.waitForNode(nodeId, (s) => s.exists && s.state === 'failed');
    const refusals = [];
    for (const operation of operations) {
      const { workflowId } = operation.events[0]!.data as { workflowId: string };
      const wf = (await env.bus.repository.load(workflowAggregate, workflowId)).state as ExistingWorkflow;
      // The first step is refused; no other step ever started.
      refusals.push([wf.operation, wf.progress[0]?.error?.code, wf.progress.slice(1).every((p) => p.status === 'pending')]);
    }
    expect(refusals).toEqual([
      ['deploy', 'BROKER_AUTH_REQUIRED', true],
      ['retire', 'BROKER_AUTH_REQUIRED', true],
    ]);
    // Not one agent command for either: the machines were not touched, and no wipe or image result can be forged.
    expect(await agentCommands()).toBe(sentBefore);
  });
});

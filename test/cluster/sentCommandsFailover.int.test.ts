import { setTimeout as sleep } from 'node:timers/promises';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { describe, expect, it } from 'vitest';
import type { AgentCommand } from '../../schemas/agent/agentCommand.ts';
import { Streams, Subjects } from '../../schemas/subjects.ts';
import { SentCommands } from '../../services/agents/sentCommands.ts';
import { connectNats } from '../../services/platform/nats/connect.ts';
import { ensureStreams } from '../../services/platform/nats/streams.ts';
import { agentCommand, log } from '../daemon/harness.ts';
import { whileFailingOver } from '../support/failover.ts';
import { startTestCluster } from '../support/natsCluster.ts';

/**
 * The result intake's command index across a failover: CI once refused every result of a chaos run for minutes
 * (RESULT_COMMAND_UNKNOWN) after the cluster lost a node, the index's consumer having stalled without an error.
 */
describe('the sent-command index on a 3-node cluster', () => {
  it.each(['the stream leader', 'the node the index is connected to'] as const)(
    'finds commands stored after %s is killed, as an agent re-publishing its result would ask',
    { timeout: 180_000 },
    async (victim) => {
      await using cluster = await startTestCluster();
      const nc = await connectNats(cluster.url, 'sent-commands');
      await ensureStreams(nc, { streamReplicas: 3, duplicateWindowMs: 120_000 });
      const js = jetstream(nc);
      const jsm = await jetstreamManager(nc);
      const index = new SentCommands(nc, log);
      await index.start();
      const abort = new AbortController();
      const send = (command: AgentCommand) =>
        whileFailingOver(() => js.publish(Subjects.siteAgentCommands('dc1', command.nodeId), JSON.stringify(command), { msgID: command.commandId }));
      /** As an agent does: its result refused, the command redelivered and the result published again, for up to 60 s. */
      const foundWithin60s = async (command: AgentCommand) => {
        for (const deadline = Date.now() + 60_000; Date.now() < deadline; await sleep(1_000))
          if (await index.find('dc1', command.nodeId, command.commandId, command.nonce, abort.signal)) return true;
        return false;
      };
      try {
        const before = agentCommand('power.get');
        await send(before);
        expect(await foundWithin60s(before)).toBe(true);

        const killed = victim === 'the stream leader' ? (await jsm.streams.info(Streams.agentCommands.name)).cluster?.leader : nc.info?.server_name;
        await cluster.nodes.find((n) => n.name === killed)!.server.kill();
        const after = Array.from({ length: 5 }, () => agentCommand('power.get'));
        for (const command of after) {
          await send(command);
          await sleep(2_000);
        }
        expect(await Promise.all(after.map(foundWithin60s))).toEqual(after.map(() => true));
        // A command never sent stays unknown.
        expect(await index.find('dc1', 'n1', 'never-sent', 'nonce', abort.signal)).toBeUndefined();
      } finally {
        abort.abort();
        await index.stop();
        await nc.close();
      }
    },
  );
});

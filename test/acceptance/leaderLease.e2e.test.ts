import { setTimeout as sleep } from 'node:timers/promises';
import type { Msg } from '@nats-io/transport-node';
import { describe, expect, it } from 'vitest';
import { commandNameOf } from '../../schemas/commandPartitions.ts';
import { LEASE_HEADER, parseLeaseStamp } from '../../schemas/lease.ts';
import { Subjects } from '../../schemas/subjects.ts';
import { sendCommand } from '../../services/platform/commands/sendCommand.ts';
import { ERROR_CODE_HEADER } from '../../services/platform/commands/requestResponder.ts';
import { CommandBus } from '../../services/platform/commands/commandBus.ts';
import { busCommands } from '../../services/api/commandCatalog.ts';
import { loadConfig } from '../../services/platform/config.ts';
import { connectNats } from '../../services/platform/nats/connect.ts';
import { openEventStore } from '../../services/stack/runtime.ts';
import { openLeaseBucket, readLease } from '../../services/platform/lease/leaderLease.ts';
import { enrollPayload } from '../support/commandPayloads.ts';
import { startTestNats, tempDir } from '../support/natsServer.ts';
import { startServeProcess, type ServeProcess } from '../support/serveProcess.ts';

const LEASE_MS = 2_000;

interface Seen {
  name: string;
  commandId: string;
  term: number | undefined;
  nodeId: string | undefined;
  at: number;
  /** The answer's error code, '' when it succeeded, undefined while unanswered. */
  answer?: string;
}

describe('leader lease of the workflow orchestrator', () => {
  it('a leader paused past its lease is replaced; when it resumes its stamped commands are refused and it stands down', { timeout: 180_000 }, async () => {
    await using nats = await startTestNats();
    using dir = tempDir('bc-lease-');
    const env = { BC_NATS_URL: nats.url, BC_NATS_AUTH: 'none', BC_DATA_DIR: dir.path, BC_LEASE_MS: String(LEASE_MS) };
    const nc = await connectNats(nats.url, 'lease-observer');
    const started: ServeProcess[] = [];
    const paused: number[] = [];
    try {
      started.push(await startServeProcess(['commands'], env));
      // Every command on the wire with its stamp, and every answer to it (the test server is anonymous: the observer sees the inboxes).
      const requests = new Map<string, Seen>();
      const seen: Seen[] = [];
      const observe = (_err: unknown, msg: Msg) => {
        const stamp = msg.headers?.get(LEASE_HEADER);
        const entry: Seen = {
          name: commandNameOf(msg.subject),
          commandId: msg.headers?.get('Bc-Command-Id') ?? '',
          term: stamp ? parseLeaseStamp(stamp)?.term : undefined,
          nodeId: msg.json<{ nodeId?: string }>().nodeId,
          at: Date.now(),
        };
        seen.push(entry);
        if (msg.reply) requests.set(msg.reply, entry);
      };
      // Commands travel on the queue subjects and, routed by aggregate, on the partition subjects.
      for (const subject of [Subjects.allCommands, Subjects.allPartitionedCommands]) nc.subscribe(subject, { callback: observe });
      nc.subscribe('_INBOX.>', {
        callback: (_err, msg: Msg) => {
          const entry = requests.get(msg.subject);
          if (entry) entry.answer = msg.headers?.get(ERROR_CODE_HEADER) ?? '';
        },
      });
      const kv = await openLeaseBucket(nc);
      const holder = async () => (await readLease(kv, 'workflow-orchestrator'))?.record.holder ?? '';
      const waitFor = async (what: () => Promise<boolean> | boolean, label: string, timeoutMs = 30_000) => {
        for (const end = Date.now() + timeoutMs; !(await what()); await sleep(50)) {
          if (Date.now() > end) throw new Error(`${label} did not happen in ${timeoutMs} ms\n${started.map((p) => p.output().slice(-3000)).join('\n---\n')}`);
        }
      };

      const a = await startServeProcess(['workflow-orchestrator'], env);
      started.push(a);
      await waitFor(async () => (await holder()).includes(`:${a.pid}:`), 'a leads');
      const b = await startServeProcess(['workflow-orchestrator'], env);
      started.push(b);
      const termA = (await readLease(kv, 'workflow-orchestrator'))!.term;
      // The test's own command bus on the same log (same data dir, same event key): it appends while the command service is paused.
      const store = await openEventStore(nc, loadConfig(env));
      const bus = new CommandBus(store, busCommands, { retries: 3 });

      await sendCommand(nc, 'site.create', { siteId: 'dc1', name: 'DC 1' }, { commandId: 'lease-e2e-site' });
      await sendCommand(nc, 'metal.enroll', enrollPayload('n1'), { commandId: 'lease-e2e-n1' });
      await waitFor(() => seen.some((s) => s.name === 'metal.startInspection' && s.term === termA && s.answer === ''), 'a inspects n1');
      // b stood by all along.
      expect(seen.filter((s) => s.term !== undefined && s.term !== termA)).toEqual([]);

      // A command a decided and sent, still unexecuted when the lease changes hands: the command service is paused
      // (the request waits in its socket), n2 is enrolled past it, and a is paused right after it sent n2's claim.
      const commands = started[0]!;
      process.kill(commands.pid!, 'SIGSTOP');
      paused.push(commands.pid!);
      await bus.execute({ name: 'metal.enroll', payload: enrollPayload('n2'), actor: 'test', commandId: 'lease-e2e-n2' });
      // The first command a sends for a new node claims its BMC system; the inspection comes once the claim holds.
      const firstForN2 = (s: Seen) => s.name === 'metal.claimIdentity' && s.nodeId === 'n2' && s.term === termA;
      await waitFor(() => seen.some(firstForN2), "a sends n2's claim");
      process.kill(a.pid!, 'SIGSTOP');
      paused.push(a.pid!);
      const pausedAt = Date.now();
      await waitFor(async () => (await holder()).includes(`:${b.pid}:`), 'b takes over', 30_000);
      const tookOverAfter = Date.now() - pausedAt;
      const termB = (await readLease(kv, 'workflow-orchestrator'))!.term;
      expect(termB).toBeGreaterThan(termA);
      // Not before a whole lease since a's last renewal, which came at most a third of a lease before the pause.
      expect(tookOverAfter).toBeGreaterThanOrEqual((LEASE_MS * 2) / 3);

      // The command service wakes up to a's stale request: refused, nothing appended for it.
      process.kill(commands.pid!, 'SIGCONT');
      const staleN2 = seen.find(firstForN2)!;
      await waitFor(() => staleN2.answer !== undefined, 'the answer to a', 15_000);
      expect(staleN2.answer).toBe('LEASE_SUPERSEDED');
      // a wakes up: it stands down, and whatever else it sends under its old term is refused too.
      const resumedAt = Date.now();
      process.kill(a.pid!, 'SIGCONT');
      paused.length = 0;
      await waitFor(() => a.output().includes('stood down'), 'a stands down', 15_000);
      const staleAfterResume = seen.filter((s) => s.term === termA && s.at >= resumedAt);
      await waitFor(() => staleAfterResume.every((s) => s.answer !== undefined), 'answers to a', 10_000);
      expect(staleAfterResume.map((s) => s.answer)).toEqual(staleAfterResume.map(() => 'LEASE_SUPERSEDED'));
      // b resumes from the log: n2's claim, then its inspection, are executed under b's term and never under a's
      // (n2 has exactly one claim and one inspection in the log).
      const executedUnder = (name: string, term: number, nodeId: string) =>
        seen.some((s) => s.name === name && s.nodeId === nodeId && s.term === term && s.answer === '');
      await waitFor(() => executedUnder('metal.claimIdentity', termB, 'n2'), 'b claims n2', 60_000);
      await waitFor(() => executedUnder('metal.startInspection', termB, 'n2'), 'b inspects n2', 60_000);
      expect(executedUnder('metal.claimIdentity', termA, 'n2')).toBe(false);
      expect(executedUnder('metal.startInspection', termA, 'n2')).toBe(false);
      // a stays a standby: b keeps the lease, and nothing after a's stand-down carries a's term.
      await sleep(LEASE_MS * 2);
      expect(await holder()).toContain(`:${b.pid}:`);
      expect(a.exitCode).toBeNull();
      const standDownSeen = Date.now() - 2 * LEASE_MS;
      expect(seen.filter((s) => s.term === termA && s.at > standDownSeen)).toEqual([]);
    } finally {
      for (const pid of paused) process.kill(pid, 'SIGCONT');
      for (const p of started.reverse()) await p.stop().catch(() => undefined);
      await nc.close();
    }
  });
});

import fc from 'fast-check';
import { generateKeyPairSync } from 'node:crypto';
import { rmSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { runCommand, type AgentExecutor, type ResultSink, type RunOutcome } from '../../daemon/agent/commandRunner.ts';
import { CommandJournal } from '../../daemon/agent/journal.ts';
import type { AgentCommand, AgentCommandKind } from '../../schemas/agent/agentCommand.ts';
import { decodeSignedResult, signAgentResult } from '../../schemas/agent/agentResultCodec.ts';
import { tempDir } from '../support/natsServer.ts';
import { agentCommand, log } from './harness.ts';

const { privateKey } = generateKeyPairSync('ed25519');
const signer = { privateKey, publicKeyRaw: new Uint8Array(32) };

/** Results kept in memory by command id, as BC_AGENT_RESULTS keeps them by subject (dedupe by msgID ignored). */
function memorySink(): ResultSink & { published: Map<string, Uint8Array[]> } {
  const published = new Map<string, Uint8Array[]>();
  return {
    published,
    sign: (c, o) =>
      signAgentResult(
        {
          commandId: c.commandId,
          kind: c.kind,
          nodeId: c.nodeId,
          siteId: c.siteId,
          agentId: 'site-dc1',
          ok: o.ok,
          errorCode: o.ok ? '' : o.errorCode,
          errorMessage: o.ok ? '' : o.errorMessage,
          payload: o.payload ?? null,
          executedAtMs: 0,
          commandNonce: c.nonce,
        },
        signer,
      ),
    publish: async (c, bytes) => void published.set(c.commandId, [...(published.get(c.commandId) ?? []), bytes]),
    existing: async (c) => published.get(c.commandId)?.at(-1),
  };
}

/** An executor that counts executions and, when told to, "loses power" half way (aborts and throws). */
function countingExecutor() {
  const executions = new Map<string, number>();
  let crashNext = false;
  let abort: AbortController | undefined;
  const executor: AgentExecutor = {
    refuse: () => undefined,
    async execute(command) {
      executions.set(command.commandId, (executions.get(command.commandId) ?? 0) + 1);
      if (crashNext) {
        abort?.abort();
        throw new Error('power lost');
      }
      return { done: command.commandId };
    },
  };
  return {
    executor,
    executions,
    deliver: async (journal: CommandJournal, results: ResultSink, command: AgentCommand, crash: boolean): Promise<RunOutcome> => {
      crashNext = crash;
      abort = new AbortController();
      return runCommand(Buffer.from(JSON.stringify(command)), { heartbeat: () => undefined, signal: abort.signal }, { journal, results, executor, log });
    },
  };
}

const kinds: AgentCommandKind[] = ['power.set', 'boot.setOnce', 'disk.wipe', 'inventory.report'];
const paramsOf: Record<string, Record<string, unknown>> = { 'power.set': { action: 'cycle' }, 'boot.setOnce': { target: 'Pxe' } };

describe('runCommand', () => {
  it('executes each destructive command at most once under any redelivery, crash and restart sequence', () => {
    const action = fc.oneof(
      fc.record({ type: fc.constant('deliver' as const), index: fc.nat(3), crash: fc.boolean() }),
      fc.record({ type: fc.constant('restart' as const) }),
    );
    return fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom(...kinds), { minLength: 4, maxLength: 4 }),
        fc.array(action, { maxLength: 25 }),
        async (commandKinds, actions) => {
          using dir = tempDir('bc-runner-');
          let journal = new CommandJournal(dir.path);
          const sink = memorySink();
          const harness = countingExecutor();
          const commands = commandKinds.map((kind) => agentCommand(kind, { params: paramsOf[kind] ?? {} }));
          const crashedBeforeFinish = new Set<string>();
          try {
            for (const a of actions) {
              if (a.type === 'restart') {
                journal.close();
                journal = new CommandJournal(dir.path);
                continue;
              }
              const command = commands[a.index]!;
              const answered = sink.published.get(command.commandId)?.at(-1);
              const outcome = await harness.deliver(journal, sink, command, a.crash);
              const last = sink.published.get(command.commandId)?.at(-1);
              if (answered) {
                // Once answered, every later delivery re-publishes the same signed bytes.
                expect(outcome).toBe('republished');
                expect(Buffer.from(last!).equals(Buffer.from(answered))).toBe(true);
              } else if (command.destructive && crashedBeforeFinish.has(command.commandId)) {
                expect(outcome).toBe('interrupted');
                expect(decodeSignedResult(last!).result.errorCode).toBe('INTERRUPTED');
              } else if (a.crash) {
                expect(outcome).toBe('aborted');
                expect(last).toBeUndefined();
                crashedBeforeFinish.add(command.commandId);
              } else {
                expect(outcome).toBe('executed');
              }
              if (command.destructive) expect(harness.executions.get(command.commandId) ?? 0).toBeLessThanOrEqual(1);
            }
          } finally {
            journal.close();
          }
        },
      ),
      { numRuns: 60 },
    );
  });

  it('does not re-run a command whose journal was lost but whose result is stored', async () => {
    using dir = tempDir('bc-runner-');
    const sink = memorySink();
    const harness = countingExecutor();
    const command = agentCommand('power.set', { params: { action: 'cycle' } });
    let journal = new CommandJournal(dir.path);
    expect(await harness.deliver(journal, sink, command, false)).toBe('executed');
    journal.close();
    for (const f of ['journal.db', 'journal.db-wal', 'journal.db-shm']) rmSync(`${dir.path}/${f}`, { force: true });
    journal = new CommandJournal(dir.path);
    expect(await harness.deliver(journal, sink, command, false)).toBe('alreadyAnswered');
    expect(harness.executions.get(command.commandId)).toBe(1);
    journal.close();
  });

  it("logs a command's start and end, and a power reading only when it fails", async () => {
    using dir = tempDir('bc-runner-');
    const journal = new CommandJournal(dir.path);
    const lines: string[] = [];
    const logs = { say: (line: { commandId?: string; text: string }) => void lines.push(`${line.commandId}: ${line.text}`) };
    const failing = new Set<string>();
    const executor: AgentExecutor = {
      refuse: () => undefined,
      async execute(command) {
        if (failing.has(command.commandId)) throw new Error('BMC unreachable');
        return { powerState: 'On' };
      },
    };
    const run = (command: AgentCommand) =>
      runCommand(
        Buffer.from(JSON.stringify(command)),
        { heartbeat: () => undefined, signal: new AbortController().signal },
        { journal, results: memorySink(), executor, log, logs },
      );
    const set = agentCommand('power.set', { params: { action: 'on' } });
    const goodRead = agentCommand('power.get');
    const badRead = agentCommand('power.get');
    failing.add(badRead.commandId);
    for (const command of [set, goodRead, badRead]) await run(command);
    expect(lines.filter((l) => l.startsWith(set.commandId)).map((l) => l.split(': ')[1]!.split(' ')[1])).toEqual(['started', 'finished']);
    expect(lines.filter((l) => l.startsWith(goodRead.commandId))).toEqual([]);
    expect(lines.filter((l) => l.startsWith(badRead.commandId))).toEqual([expect.stringContaining('power.get failed after')]);
    journal.close();
  });

  it('answers EXPIRED and INVALID_COMMAND without executing', async () => {
    using dir = tempDir('bc-runner-');
    const journal = new CommandJournal(dir.path);
    const sink = memorySink();
    const harness = countingExecutor();
    const expired = agentCommand('power.set', { params: { action: 'on' }, notAfter: new Date(Date.now() - 1).toISOString() });
    const invalid = agentCommand('power.set', { params: { action: 'explode' } });
    expect(await harness.deliver(journal, sink, expired, false)).toBe('expired');
    expect(await harness.deliver(journal, sink, invalid, false)).toBe('rejected');
    expect(decodeSignedResult(sink.published.get(expired.commandId)![0]!).result.errorCode).toBe('EXPIRED');
    expect(decodeSignedResult(sink.published.get(invalid.commandId)![0]!).result.errorCode).toBe('INVALID_COMMAND');
    expect(harness.executions.size).toBe(0);
    journal.close();
  });
});

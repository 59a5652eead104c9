import { BCX_WARM_START, RuntimeInstanceStatus, type BcxManifest } from '../../../schemas/bcx/bcxProtocol.ts';
import type { InstanceApplyResult, InstanceRemoveResult, InstanceSpec } from '../../../schemas/agent/hostInstances.ts';
import type { Logger } from '../../../services/platform/logger.ts';
import { AgentError } from '../../agent/errors.ts';
import { InstanceJournal, type InstanceRecord } from './instanceJournal.ts';

/** What the host needs of a running plugin (`BcxPluginHost`). */
export interface RuntimePlugin {
  readonly manifest: BcxManifest | undefined;
  readonly ready: boolean;
  invoke(operation: string, args: readonly unknown[], timeoutMs?: number): Promise<unknown>;
}

export interface InstanceHostOptions {
  stateDir: string;
  /** The plugins `bcd node` runs now; a runtime is the one whose hello lists kind `runtime` under the spec's id. */
  runtimes: () => Iterable<RuntimePlugin>;
  /** How long one `apply` may take (default 10 minutes: a runtime may fetch an image first). */
  applyTimeoutMs?: number;
  log: Logger;
}

/** Codes of a bcx call that never reached an answer: the spec stays unsettled and is applied again. */
const unanswered = new Set(['PLUGIN_EXITED', 'PLUGIN_NOT_RUNNING', 'INVOKE_TIMEOUT']);

const codeOf = (err: unknown): string => {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : 'RUNTIME_ERROR';
};

/**
 * The instances of an installed host (docs/bcx.md, "Instances on `bcd node`"): each spec journaled before its runtime
 * plugin is asked to `apply` it, the answer recorded, user data passed on the first apply only. `reconcile` compares
 * each runtime's `list` with the journal and applies again what a plugin crash or restart left behind. One operation
 * at a time: the agent runs one command at a time, and reconciliation runs beside it.
 */
export function instanceHost(options: InstanceHostOptions) {
  const journal = new InstanceJournal(options.stateDir);
  const log = options.log.child({ component: 'instances' });
  let queue: Promise<unknown> = Promise.resolve();
  const serial = <T>(work: () => Promise<T>): Promise<T> => {
    const run = queue.then(work, work);
    queue = run.catch(() => undefined);
    return run;
  };

  function runtimeOf(id: string): RuntimePlugin {
    for (const plugin of options.runtimes()) {
      if (plugin.manifest?.id !== id || !plugin.manifest.kinds.includes('runtime')) continue;
      if (!plugin.ready) throw new AgentError('RUNTIME_NOT_LOADED', `runtime ${id} is between restarts`);
      return plugin;
    }
    throw new AgentError('RUNTIME_NOT_LOADED', `no runtime plugin ${id} runs on this host`);
  }

  /** Asks the runtime to apply the record's spec and records its answer; the record stays unsettled without one. */
  async function converge(runtime: RuntimePlugin, record: InstanceRecord): Promise<InstanceApplyResult> {
    const { id } = record.spec;
    // A taken warm slot keeps the runtime's id it was prepared under; the runtime never hears of the slot itself.
    const runtimeId = record.runtimeId ?? id;
    const { warm: _warm, ...forRuntime } = record.spec;
    const userData = record.firstApplied ? undefined : journal.userData(id);
    let status: RuntimeInstanceStatus;
    try {
      const asked = { ...forRuntime, id: runtimeId, ...(userData !== undefined ? { userData } : {}) };
      const answer = await runtime.invoke('apply', [asked], options.applyTimeoutMs ?? 600_000);
      status = RuntimeInstanceStatus.parse(answer);
      if (status.id !== runtimeId) throw new AgentError('INSTANCE_FAILED', `the runtime answered for instance ${status.id}`);
    } catch (err) {
      const code = codeOf(err);
      if (!unanswered.has(code)) {
        // The runtime refused the spec: that is its answer, kept until the next apply (the user data too).
        const message = `${code}: ${(err as Error).message}`.slice(0, 2_000);
        journal.write({ ...record, settled: true, status: { id, state: 'error', addresses: [], message }, recordedAt: new Date().toISOString() });
      }
      throw new AgentError('INSTANCE_FAILED', `${record.spec.runtime} did not apply instance ${id}: ${code}: ${(err as Error).message}`, { cause: err });
    }
    journal.write({ ...record, firstApplied: true, settled: true, status, recordedAt: new Date().toISOString() });
    journal.dropUserData(id);
    if (status.state === 'error')
      throw new AgentError('INSTANCE_FAILED', `${record.spec.runtime} reports instance ${id} in error: ${status.message ?? 'no message'}`);
    return { runtime: record.spec.runtime, status, userDataDelivered: userData !== undefined };
  }

  /**
   * The record `spec` continues: its own, or the warm slot it takes (`fromSlot`) renamed to it. The slot's runtime id
   * and answer are kept, and it counts as never applied, so this apply carries the user data to the slot's first
   * start. The new record is written before the slot's goes: a crash in between leaves a slot record that `reconcile`
   * drops, never a runtime instance nobody records.
   */
  function recordBefore(spec: InstanceSpec): InstanceRecord | undefined {
    const own = journal.read(spec.id);
    if (own || spec.fromSlot === undefined) return own;
    const slot = journal.read(spec.fromSlot);
    if (!slot?.spec.warm || slot.spec.runtime !== spec.runtime) return undefined;
    const { warm: _warm, ...slotSpec } = slot.spec;
    const taken: InstanceRecord = { ...slot, spec: { ...slotSpec, id: spec.id }, runtimeId: slot.runtimeId ?? slot.spec.id, firstApplied: false };
    journal.write(taken);
    journal.forget(spec.fromSlot);
    log.info({ instance: spec.id, slot: spec.fromSlot }, 'warm slot taken');
    return taken;
  }

  function apply(spec: InstanceSpec): Promise<InstanceApplyResult> {
    return serial(async () => {
      const runtime = runtimeOf(spec.runtime);
      if (spec.warm && !runtime.manifest?.features?.includes(BCX_WARM_START))
        throw new AgentError('WARM_START_UNSUPPORTED', `runtime ${spec.runtime} does not declare ${BCX_WARM_START}: it takes no warm slot`);
      const before = recordBefore(spec);
      if (before && before.spec.runtime !== spec.runtime) {
        throw new AgentError('INVALID_COMMAND', `instance ${spec.id} runs on runtime ${before.spec.runtime}; remove it before applying it to ${spec.runtime}`);
      }
      const { userData, fromSlot: _fromSlot, ...recorded } = spec;
      const firstApplied = before?.firstApplied ?? false;
      if (firstApplied) journal.dropUserData(spec.id);
      else if (userData !== undefined) journal.keepUserData(spec.id, userData);
      const record: InstanceRecord = {
        spec: recorded,
        ...(before?.runtimeId !== undefined ? { runtimeId: before.runtimeId } : {}),
        firstApplied,
        settled: false,
        status: before?.status ?? null,
        recordedAt: new Date().toISOString(),
      };
      journal.write(record);
      return converge(runtime, record);
    });
  }

  function remove(id: string): Promise<InstanceRemoveResult> {
    return serial(async () => {
      const record = journal.read(id);
      if (!record) return { id, removed: false };
      const runtime = runtimeOf(record.spec.runtime);
      try {
        await runtime.invoke('remove', [record.runtimeId ?? id]);
      } catch (err) {
        throw new AgentError('INSTANCE_FAILED', `${record.spec.runtime} did not remove instance ${id}: ${codeOf(err)}: ${(err as Error).message}`, {
          cause: err,
        });
      }
      journal.forget(id);
      return { id, removed: true };
    });
  }

  /**
   * Applies again each recorded spec whose apply went unanswered, that its runtime no longer lists, or whose listed
   * state moved away from the one last answered (a process that died). A runtime not running now is left for later.
   */
  function reconcile(): Promise<{ reapplied: string[]; failed: string[] }> {
    return serial(async () => {
      const reapplied: string[] = [];
      const failed: string[] = [];
      const { records: all, unreadable } = journal.all();
      if (unreadable.length > 0) log.warn({ unreadable }, 'instance records unreadable; left as they are');
      // A slot record whose runtime instance a taken record already names: what a crash mid-take left behind.
      const taken = new Set(all.flatMap((r) => (r.runtimeId !== undefined ? [r.runtimeId] : [])));
      for (const r of all) if (r.spec.warm && taken.has(r.spec.id)) journal.forget(r.spec.id);
      const records = all.filter((r) => !(r.spec.warm && taken.has(r.spec.id)));
      const byRuntime = new Map<string, InstanceRecord[]>();
      for (const record of records) byRuntime.set(record.spec.runtime, [...(byRuntime.get(record.spec.runtime) ?? []), record]);
      for (const [name, recorded] of byRuntime) {
        let runtime: RuntimePlugin;
        let listed: Map<string, RuntimeInstanceStatus>;
        try {
          runtime = runtimeOf(name);
          listed = new Map(
            RuntimeInstanceStatus.array()
              .parse(await runtime.invoke('list', []))
              .map((s) => [s.id, s]),
          );
        } catch (err) {
          log.warn({ runtime: name, code: codeOf(err) }, 'runtime not reconciled now');
          continue;
        }
        for (const record of recorded) {
          const seen = listed.get(record.runtimeId ?? record.spec.id);
          if (record.settled && seen && seen.state === record.status?.state) {
            if (JSON.stringify(seen) !== JSON.stringify(record.status)) journal.write({ ...record, status: seen });
            continue;
          }
          try {
            await converge(runtime, record);
            reapplied.push(record.spec.id);
          } catch (err) {
            failed.push(record.spec.id);
            log.warn({ instance: record.spec.id, runtime: name, code: codeOf(err) }, 'instance not converged');
          }
        }
      }
      return { reapplied, failed };
    });
  }

  /** What the heartbeat reports: every recorded instance. */
  const records = (): InstanceRecord[] => journal.all().records;

  return { apply, remove, reconcile, records };
}
export type InstanceHost = ReturnType<typeof instanceHost>;

import type { Readable, Writable } from 'node:stream';
import { BcxFrameReader, encodeBcxFrame } from '../../../schemas/bcx/bcxFrames.ts';
import { BCX_PROTOCOL_VERSION, BcxInvoke, BcxManifest, type BcxError, type BcxResult } from '../../../schemas/bcx/bcxProtocol.ts';

/** An operation's failure a plugin wants the daemon to see by name (`code`: upper snake case, e.g. `IMAGE_MISSING`). */
export class BcxOperationError extends Error {
  override name = 'BcxOperationError';
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export type BcxOperation = (...args: unknown[]) => unknown;

export interface BcxPluginDefinition {
  readonly manifest: BcxManifest;
  readonly operations: Readonly<Record<string, BcxOperation>>;
}

/** A bcx plugin: its manifest (checked now, so a wrong one fails at load, not at the daemon) and its operations. */
export function defineBcxPlugin(plugin: BcxPluginDefinition): BcxPluginDefinition {
  return { manifest: BcxManifest.parse(plugin.manifest), operations: plugin.operations };
}

const errorOf = (err: unknown): BcxError =>
  err instanceof BcxOperationError && /^[A-Z][A-Z0-9_]{0,63}$/.test(err.code)
    ? { code: err.code, message: err.message.slice(0, 2_000) }
    : { code: 'PLUGIN_ERROR', message: (err instanceof Error ? err.message : String(err)).slice(0, 2_000) };

/**
 * Serves a plugin over its stdin and stdout (the daemon's end of bcx): says hello, then answers each invocation as it
 * completes, several at once. Resolves when the daemon closes stdin. Anything the plugin logs must go to stderr:
 * stdout is the protocol's.
 */
export async function serveBcxPlugin(
  plugin: BcxPluginDefinition,
  io: { input: Readable; output: Writable } = { input: process.stdin, output: process.stdout },
): Promise<void> {
  const send = (frame: unknown) => io.output.write(encodeBcxFrame(frame));
  send({ type: 'hello', protocol: BCX_PROTOCOL_VERSION, manifest: plugin.manifest });
  const reader = new BcxFrameReader();
  const running = new Set<Promise<void>>();
  const answer = async (invoke: BcxInvoke): Promise<void> => {
    const operation = Object.hasOwn(plugin.operations, invoke.operation) ? plugin.operations[invoke.operation] : undefined;
    let result: BcxResult;
    if (!operation) result = { type: 'result', id: invoke.id, ok: false, error: { code: 'UNKNOWN_OPERATION', message: `no operation ${invoke.operation}` } };
    else {
      try {
        result = { type: 'result', id: invoke.id, ok: true, value: (await operation(...invoke.args)) ?? null };
      } catch (err) {
        result = { type: 'result', id: invoke.id, ok: false, error: errorOf(err) };
      }
    }
    send(result);
  };
  for await (const chunk of io.input as AsyncIterable<Buffer>) {
    for (const frame of reader.push(chunk)) {
      const invoke = BcxInvoke.safeParse(frame);
      // The daemon's frames are well formed; one that is not is dropped rather than answered with a guessed id.
      if (!invoke.success) continue;
      const run = answer(invoke.data).finally(() => running.delete(run));
      running.add(run);
    }
  }
  await Promise.all(running);
}

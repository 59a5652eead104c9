import { ProtocolHandler, TE } from '@nats-io/nats-core/internal';

interface ProtocolInternals {
  outbound: { length(): number; size(): number; fill(...buffers: Uint8Array[]): void };
  pendingLimit: number;
  flushPending(): void;
  sendCommand(cmd: string | Uint8Array, ...payloads: Uint8Array[]): void;
  close(err?: Error): Promise<void>;
}

const PATCHED = Symbol.for('bc.coalescedWrites');

/**
 * nats.js 3.4 writes what a connection queued at the end of the current microtask queue: a process that handles one
 * message per I/O callback (an ack, a reply, a JetStream publish for each) makes one socket write, one syscall, per
 * message. Under load that was among the largest costs in the reconciler's and the commands service's profiles.
 * This moves the write to the end of the event loop's turn (`setImmediate`), so everything queued by the callbacks of
 * one poll phase goes out in one write. Order is unchanged (one buffer, drained in order); `flush()` and the
 * buffer-full path still write at once, and so does `close()`, which would otherwise drop what is queued (the
 * transport destroys its socket without writing the connection's buffer). Idempotent.
 */
export function coalesceSocketWrites(): void {
  const proto = ProtocolHandler.prototype as unknown as ProtocolInternals & { [PATCHED]?: true };
  if (proto[PATCHED]) return;
  proto.sendCommand = function (this: ProtocolInternals, cmd: string | Uint8Array, ...payloads: Uint8Array[]) {
    const queued = this.outbound.length();
    this.outbound.fill(typeof cmd === 'string' ? TE.encode(cmd) : cmd, ...payloads);
    if (queued === 0) setImmediate(() => this.flushPending());
    else if (this.outbound.size() >= this.pendingLimit) this.flushPending();
  };
  const close = proto.close;
  proto.close = function (this: ProtocolInternals, err?: Error) {
    this.flushPending();
    return close.call(this, err);
  };
  proto[PATCHED] = true;
}

import { ProtocolHandler, TE } from '@nats-io/nats-core/internal';

interface ProtocolInternals {
  outbound: { size(): number; fill(...buffers: Uint8Array[]): void };
  pendingLimit: number;
  flushPending(): void;
  sendCommand(cmd: string | Uint8Array, ...payloads: Uint8Array[]): void;
  publish(subject: string, payload?: Uint8Array | string, options?: unknown): void;
  close(err?: Error): Promise<void>;
}

/** When the connection's queued bytes go out: this turn's end, or (acks only) a little later. */
interface WriteSchedule {
  turnEnd?: NodeJS.Immediate;
  later?: NodeJS.Timeout;
  /** The command being queued is a JetStream ack (or nak, progress, term). */
  queuingAck?: boolean;
}

const PATCHED = Symbol.for('bc.coalescedWrites');
const SCHEDULE = Symbol.for('bc.coalescedWrites.schedule');

/**
 * How long an ack may wait for other bytes to travel with. Nothing waits on an ack but the server's ack-wait timer
 * (seconds), and an ack lost with its process only brings the message again, as a crash just before acking always
 * could.
 */
export const ACK_DELAY_MS = 20;

type Patched = ProtocolInternals & { [SCHEDULE]?: WriteSchedule };

/**
 * nats.js 3.4 writes what a connection queued at the end of the current microtask queue: a process that handles one
 * message per I/O callback (an ack, a reply, a JetStream publish for each) makes one socket write, one syscall, per
 * message. Under load that was among the largest costs in the reconciler's and the commands service's profiles.
 * This moves the write to the end of the event loop's turn (`setImmediate`), so everything queued by the callbacks of
 * one poll phase goes out in one write; a JetStream ack queued alone waits up to `ACK_DELAY_MS` for company. Order is
 * unchanged (one buffer, drained in order); `flush()` and the buffer-full path still write at once, and so does
 * `close()`, which would otherwise drop what is queued (the transport destroys its socket without writing the
 * connection's buffer). Idempotent.
 */
export function coalesceSocketWrites(): void {
  const proto = ProtocolHandler.prototype as unknown as Patched & { [PATCHED]?: true };
  if (proto[PATCHED]) return;
  const publish = proto.publish;
  proto.publish = function (this: Patched, subject, payload, options) {
    if (!subject.startsWith('$JS.ACK.')) return publish.call(this, subject, payload, options);
    const schedule = (this[SCHEDULE] ??= {});
    schedule.queuingAck = true;
    try {
      return publish.call(this, subject, payload, options);
    } finally {
      schedule.queuingAck = false;
    }
  };
  proto.sendCommand = function (this: Patched, cmd: string | Uint8Array, ...payloads: Uint8Array[]) {
    this.outbound.fill(typeof cmd === 'string' ? TE.encode(cmd) : cmd, ...payloads);
    if (this.outbound.size() >= this.pendingLimit) return this.flushPending();
    const schedule = (this[SCHEDULE] ??= {});
    if (schedule.turnEnd) return;
    if (!schedule.queuingAck) schedule.turnEnd = setImmediate(() => this.flushPending());
    else schedule.later ??= setTimeout(() => this.flushPending(), ACK_DELAY_MS);
  };
  const flushPending = proto.flushPending;
  proto.flushPending = function (this: Patched) {
    const schedule = this[SCHEDULE];
    if (schedule) {
      clearImmediate(schedule.turnEnd);
      clearTimeout(schedule.later);
      schedule.turnEnd = schedule.later = undefined;
    }
    flushPending.call(this);
  };
  const close = proto.close;
  proto.close = function (this: Patched, err?: Error) {
    this.flushPending();
    return close.call(this, err);
  };
  proto[PATCHED] = true;
}

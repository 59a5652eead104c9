import type { NatsConnection } from '@nats-io/transport-node';
import { sendCommand } from '../../../services/platform/commands/sendCommand.ts';
import { PlatformError } from '../../../schemas/platformError.ts';

/** When each machine reached each point of its cycle (ms since the epoch). */
export interface MachineTimes {
  enrolled?: number;
  ready?: number;
  deployed?: number;
  released?: number;
  failed?: string;
}

export interface Image {
  url: string;
  sha256: string;
}

interface RawEvent {
  type: string;
  data: { nodeId?: string; operation?: string; reason?: string; failedStep?: string | null };
}

/**
 * Drives every machine of the site around one cycle by watching node events as they are appended (core subscription
 * on the node subjects): inspected → `metal.deploy`; deployed → `metal.undeploy`; released → done.
 */
export class FleetDriver {
  readonly machines = new Map<string, MachineTimes>();
  readonly errors: string[] = [];
  /** When each step attempt's work message went out (`<workflowId>/<stepIndex>/<attempt>` → ms): splits scheduling latency. */
  readonly workSeenAt = new Map<string, number>();
  #done = 0;
  #lastEventAt = Date.now();
  #onProgress: (() => void) | undefined;

  constructor(
    private readonly nc: NatsConnection,
    private readonly siteId: string,
    private readonly expected: number,
    private readonly image: Image,
  ) {}

  /** `workTap`: a connection allowed to read step work (the bench's observer). */
  start(workTap: NatsConnection = this.nc): void {
    const sub = this.nc.subscribe(`bc.evt.metal.node.>`);
    void (async () => {
      for await (const msg of sub) {
        const batch = msg.json<{ events: RawEvent[] }>();
        for (const e of batch.events) this.#apply(e);
      }
    })();
    const work = workTap.subscribe('bc.work.control-plane.>');
    void (async () => {
      for await (const msg of work) {
        const w = msg.json<{ workflowId: string; stepIndex: number; attempt: number }>();
        const key = `${w.workflowId}/${w.stepIndex}/${w.attempt}`;
        if (!this.workSeenAt.has(key)) this.workSeenAt.set(key, Date.now());
      }
    })();
  }

  get done(): number {
    return this.#done;
  }

  count(key: keyof MachineTimes): number {
    let n = 0;
    for (const m of this.machines.values()) if (m[key] !== undefined) n++;
    return n;
  }

  /** Resolves true when every machine completed its cycle or failed; false after `timeoutMs`, or `stallMs` without any node event. */
  finished(timeoutMs: number, stallMs: number): Promise<boolean> {
    return new Promise((resolve) => {
      const started = Date.now();
      const watch = setInterval(() => {
        if (Date.now() - started > timeoutMs || Date.now() - this.#lastEventAt > stallMs) {
          clearInterval(watch);
          resolve(false);
        }
      }, 1_000);
      this.#onProgress = () => {
        if (this.#done >= this.expected) {
          clearInterval(watch);
          resolve(true);
        }
      };
      this.#onProgress();
    });
  }

  #apply(e: RawEvent): void {
    const nodeId = e.data.nodeId;
    if (!nodeId || !nodeId.startsWith(`${this.siteId}-`)) return;
    this.#lastEventAt = Date.now();
    const m = this.machines.get(nodeId) ?? {};
    this.machines.set(nodeId, m);
    const now = Date.now();
    if (e.type === 'NodeEnrolled') m.enrolled ??= now;
    else if (e.type === 'NodeOperationCompleted') {
      if (e.data.operation === 'inspect' && m.ready === undefined) {
        m.ready = now;
        this.#send(
          'metal.deploy',
          // No keys: the bench's image is far smaller than a partition table's first MiB, so there is nowhere for a NoCloud seed.
          { nodeId, imageUrl: this.image.url, imageSha256: this.image.sha256, role: 'host' },
          `fleet-deploy-${nodeId}`,
        );
      } else if (e.data.operation === 'deploy' && m.deployed === undefined) {
        m.deployed = now;
        this.#send('metal.undeploy', { nodeId }, `fleet-undeploy-${nodeId}`);
      } else if (e.data.operation === 'release' && m.released === undefined) {
        m.released = now;
        this.#finish();
      }
    } else if (e.type === 'NodeOperationFailed' && m.failed === undefined) {
      m.failed = `${e.data.operation ?? '?'} failed at ${e.data.failedStep ?? '?'}: ${e.data.reason ?? ''}`.slice(0, 300);
      this.errors.push(`${nodeId}: ${m.failed}`);
      this.#finish();
    }
  }

  #finish(): void {
    this.#done++;
    this.#onProgress?.();
  }

  #send(name: string, payload: unknown, commandId: string): void {
    const attempt = async (n: number): Promise<void> => {
      try {
        await sendCommand(this.nc, name, payload, { commandId, timeoutMs: 30_000 });
      } catch (err) {
        if (err instanceof PlatformError && err.code !== 'CONCURRENCY_CONFLICT' && err.code !== 'UNAVAILABLE' && err.code !== 'INTERNAL') {
          this.errors.push(`${name} ${commandId}: ${err.code} ${err.message}`);
          return;
        }
        if (n >= 5) return void this.errors.push(`${name} ${commandId}: gave up: ${String(err)}`);
        await new Promise((r) => setTimeout(r, 500 * (n + 1)));
        return attempt(n + 1);
      }
    };
    void attempt(0);
  }
}

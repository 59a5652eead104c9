import { capLogText, withoutUrls, type NodeLogLine, type NodeLogSource } from '../../schemas/agent/nodeLog.ts';
import { Subjects } from '../../schemas/subjects.ts';

/**
 * The bound on what one agent prints: `linesPerSecond` sustained, `burst` at once, `queueMax` waiting. With lines of
 * at most `NODE_LOG_TEXT_MAX` characters that is about 40 KiB/s per agent at the defaults, whatever a command prints.
 */
export interface NodeLogBudget {
  linesPerSecond: number;
  burst: number;
  queueMax: number;
  /** How long a line may wait before it is sent: lines printed together leave together. */
  flushMs: number;
}

export const DEFAULT_NODE_LOG_BUDGET: NodeLogBudget = { linesPerSecond: 20, burst: 100, queueMax: 200, flushMs: 250 };

/** What an agent says about a node: its site, the node, and the source fixed by who it is. */
export type NodeLogSay = Pick<NodeLogLine, 'nodeId' | 'stream' | 'text'> & { commandId?: string | undefined };

const keyOf = (line: Pick<NodeLogSay, 'nodeId' | 'commandId'>) => `${line.nodeId}/${line.commandId ?? ''}`;

/**
 * Sends one agent's node log lines to BC_LOGS (core publish on `bc.site.<siteId>.log.<nodeId>.<source>`), batched
 * every `flushMs` and rate-limited by a token bucket, so a chatty command cannot flood the broker or crowd out other
 * nodes' lines. Over budget, a `progress` line replaces the one of its command still waiting (only the latest
 * percentage matters), and output beyond `queueMax` is dropped and counted: the next line sent for that node says how
 * many were lost, after the lines that were waiting. Every URL is cut out of the text (`withoutUrls`). Publishing never throws into the work it
 * describes: a log is best effort.
 */
export class NodeLogPublisher {
  readonly #budget: NodeLogBudget;
  readonly #now: () => number;
  #tokens: number;
  #refilledAt: number;
  readonly #queue: NodeLogSay[] = [];
  readonly #dropped = new Map<string, { nodeId: string; commandId?: string | undefined; count: number }>();
  #timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly publish: (subject: string, data: string) => void,
    private readonly siteId: string,
    private readonly source: NodeLogSource,
    budget: Partial<NodeLogBudget> = {},
    now: () => number = Date.now,
  ) {
    this.#budget = { ...DEFAULT_NODE_LOG_BUDGET, ...budget };
    this.#now = now;
    this.#tokens = this.#budget.burst;
    this.#refilledAt = now();
  }

  /** Queues a line; it leaves within `flushMs` if the budget allows. */
  say(line: NodeLogSay): void {
    // Under budget every line leaves; over it, a progress line replaces its command's waiting one.
    if (line.stream === 'progress' && this.#queue.length >= this.#refill()) {
      const waiting = this.#queue.findIndex((q) => q.stream === 'progress' && keyOf(q) === keyOf(line));
      if (waiting !== -1) {
        this.#queue[waiting] = line;
        return;
      }
    }
    if (this.#queue.length >= this.#budget.queueMax) {
      const key = keyOf(line);
      const dropped = this.#dropped.get(key) ?? { nodeId: line.nodeId, commandId: line.commandId, count: 0 };
      dropped.count += 1;
      this.#dropped.set(key, dropped);
    } else {
      this.#queue.push(line);
    }
    this.#timer ??= setTimeout(() => {
      this.#timer = undefined;
      this.flush();
    }, this.#budget.flushMs).unref();
  }

  /** Sends what the budget allows now (the timer calls it; tests and shutdown too). */
  flush(): void {
    this.#refill();
    while (this.#queue.length > 0 && this.#tokens >= 1) this.#send(this.#queue.shift()!);
    // What was dropped came after everything queued: its count follows them, in order.
    for (const [key, dropped] of this.#dropped) {
      if (this.#queue.length > 0 || this.#tokens < 1) break;
      this.#dropped.delete(key);
      this.#send({ nodeId: dropped.nodeId, commandId: dropped.commandId, stream: 'stderr', text: `[${dropped.count} lines dropped: over the log rate limit]` });
    }
    if ((this.#queue.length > 0 || this.#dropped.size > 0) && !this.#timer) {
      this.#timer = setTimeout(() => {
        this.#timer = undefined;
        this.flush();
      }, this.#budget.flushMs).unref();
    }
  }

  /** Tokens now, after adding those earned since the last refill. */
  #refill(): number {
    const now = this.#now();
    this.#tokens = Math.min(this.#budget.burst, this.#tokens + ((now - this.#refilledAt) / 1_000) * this.#budget.linesPerSecond);
    this.#refilledAt = now;
    return this.#tokens;
  }

  /** Lines still waiting (not yet sent) and counted as dropped. */
  get backlog(): { queued: number; dropped: number } {
    return { queued: this.#queue.length, dropped: [...this.#dropped.values()].reduce((n, d) => n + d.count, 0) };
  }

  /** Sends what the budget allows and stops the timer; what is left over is dropped. */
  close(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.flush();
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #send(line: NodeLogSay): void {
    this.#tokens -= 1;
    const body: NodeLogLine = {
      nodeId: line.nodeId,
      source: this.source,
      ...(line.commandId !== undefined ? { commandId: line.commandId } : {}),
      stream: line.stream,
      at: new Date(this.#now()).toISOString(),
      text: capLogText(withoutUrls(line.text)),
    };
    try {
      this.publish(Subjects.nodeLog(this.siteId, line.nodeId, this.source), JSON.stringify(body));
    } catch {
      // A closed connection loses the line; the command's result is what counts.
    }
  }
}

/**
 * Hetzner Cloud's rate limit as the reference describes it: a bucket of requests per project (3600), refilled one per
 * second, reported on every answer by `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset` (the UNIX time,
 * in seconds, when the bucket is full again); an empty bucket answers 429 `rate_limit_exceeded`.
 */
export class RateLimitBucket {
  private remaining: number;
  private at = Date.now();

  constructor(private readonly options: { limit: number; refillMs: number }) {
    this.remaining = options.limit;
  }

  /** Takes one request from the bucket; false when it is empty. */
  take(): boolean {
    this.refill();
    if (this.remaining === 0) return false;
    this.remaining--;
    return true;
  }

  /** Empties the bucket, with one request due back now: what an injected `rate_limit_exceeded` looks like. */
  drain(): void {
    this.remaining = 0;
    this.at = Date.now() - this.options.refillMs;
  }

  headers(): Record<string, string> {
    const { limit, refillMs } = this.options;
    const full = this.at + (limit - this.remaining) * refillMs;
    return { 'ratelimit-limit': String(limit), 'ratelimit-remaining': String(this.remaining), 'ratelimit-reset': String(Math.ceil(full / 1000)) };
  }

  private refill(): void {
    const refilled = Math.floor((Date.now() - this.at) / this.options.refillMs);
    if (refilled <= 0) return;
    this.remaining = Math.min(this.options.limit, this.remaining + refilled);
    this.at += refilled * this.options.refillMs;
  }
}

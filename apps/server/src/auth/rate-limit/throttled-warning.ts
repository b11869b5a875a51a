import type { PinoLogger } from 'nestjs-pino';

/**
 * A warning logged at most once per `intervalMs`, with how many were held back: when the counter
 * backend is down every request fails the same way, and a line per request would flood the logs.
 */
export class ThrottledWarning {
  private lastLoggedAt = -Infinity;
  private suppressed = 0;

  constructor(
    private readonly logger: Pick<PinoLogger, 'warn'>,
    private readonly intervalMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  warn(error: unknown, message: string): void {
    const now = this.now();
    if (now - this.lastLoggedAt < this.intervalMs) {
      this.suppressed += 1;
      return;
    }
    this.logger.warn({ err: error, suppressedSinceLast: this.suppressed }, message);
    this.lastLoggedAt = now;
    this.suppressed = 0;
  }
}

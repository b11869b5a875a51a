import { Injectable } from '@nestjs/common';

/**
 * Whether this process is draining (SIGTERM received): it takes no new work of its own accord,
 * readiness answers 503 so a load balancer sends new calls elsewhere, and live calls go on. A
 * webhook or media socket that still arrives is served: refusing it would drop a caller whom the
 * load balancer had already routed here.
 */
@Injectable()
export class ServerDrain {
  private startedAtMs: number | null = null;

  get draining(): boolean {
    return this.startedAtMs !== null;
  }

  /** Marks the drain as started; returns false when it already was. */
  begin(nowMs = performance.now()): boolean {
    if (this.startedAtMs !== null) return false;
    this.startedAtMs = nowMs;
    return true;
  }

  /** ms since the drain began (0 while serving). */
  elapsedMs(nowMs = performance.now()): number {
    return this.startedAtMs === null ? 0 : nowMs - this.startedAtMs;
  }
}

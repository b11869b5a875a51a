import { Injectable } from '@nestjs/common';

/**
 * Whether this process is draining (SIGTERM received): it takes no new work of its own accord,
 * readiness answers 503 so a load balancer sends new calls elsewhere, and live calls go on. A
 * webhook or media socket that still arrives is served: refusing it would drop a caller whom the
 * load balancer had already routed here.
 */
@Injectable()
export class ServerDrain {
  private started = false;

  get draining(): boolean {
    return this.started;
  }

  /** Marks the drain as started (idempotent). */
  begin(): void {
    this.started = true;
  }
}

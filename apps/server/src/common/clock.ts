import { Injectable } from '@nestjs/common';

/**
 * The wall clock that scheduling decisions read (a campaign's start and end, its calling windows,
 * when a contact is due again; which rate-limit window a request falls in). One injected provider
 * rather than `new Date()` scattered around, so that an end-to-end test can move the server's idea
 * of "now" to a chosen instant (a Monday morning, a window that opens in five hours, the moment a
 * Retry-After runs out) while everything else runs in real time: call timestamps, leases, webhook
 * retries and database `now()` are not moved by it.
 */
@Injectable()
export class Clock {
  private offsetMs = 0;
  private stoppedAtMs: number | undefined;

  now(): Date {
    return new Date(this.stoppedAtMs ?? Date.now() + this.offsetMs);
  }

  /** From now on now() reads `instant`, and moves on with real time from there (tests). */
  travelTo(instant: Date): void {
    this.stoppedAtMs = undefined;
    this.offsetMs = instant.getTime() - Date.now();
  }

  /** From now on now() reads `instant` and stays there until moved again (tests that count within one window). */
  stopAt(instant: Date): void {
    this.stoppedAtMs = instant.getTime();
  }
}

import { Injectable } from '@nestjs/common';

/**
 * The wall clock that scheduling decisions read (a campaign's start and end, its calling windows,
 * when a contact is due again). One injected provider rather than `new Date()` scattered around, so
 * that an end-to-end test can move the server's idea of "now" to a chosen instant (a Monday morning,
 * a window that opens in five hours) while everything else runs in real time: call timestamps,
 * leases, webhook retries and database `now()` are not moved by it.
 */
@Injectable()
export class Clock {
  private offsetMs = 0;

  now(): Date {
    return new Date(Date.now() + this.offsetMs);
  }

  /** From now on now() reads `instant`, and moves on with real time from there (tests). */
  travelTo(instant: Date): void {
    this.offsetMs = instant.getTime() - Date.now();
  }
}

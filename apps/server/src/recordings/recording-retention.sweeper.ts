import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '@switchboard/config';
import { PinoLogger } from 'nestjs-pino';
import { CallRecordingService } from './call-recording.service';

/**
 * Every RECORDINGS_RETENTION_SWEEP_INTERVAL_MS (and once at start-up): deletes recordings past their
 * organization's retention period (PATCH /v1/organization `recordingRetentionDays`), in batches, and
 * stores the recordings a stopped process left in its spool folder. Every process runs it: two
 * sweeps that pick the same recording both succeed harmlessly.
 */
@Injectable()
export class RecordingRetentionSweeper implements OnApplicationBootstrap, OnApplicationShutdown {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly recordings: CallRecordingService,
    private readonly logger: PinoLogger,
  ) {
    this.logger.setContext(RecordingRetentionSweeper.name);
  }

  onApplicationBootstrap(): void {
    const intervalMs = this.config.recordings.retentionSweepIntervalMs;
    if (intervalMs === 0) return;
    setImmediate(() => void this.sweep());
    this.timer = setInterval(() => void this.sweep(), intervalMs);
    this.timer.unref();
  }

  /** One sweep (at most one at a time in this process): batches until nothing expired is left. */
  async sweep(now = new Date()): Promise<number> {
    if (this.running) return 0;
    let total = 0;
    this.running = (async () => {
      try {
        for (;;) {
          const deleted = await this.recordings.sweepRetention(now);
          total += deleted;
          if (deleted === 0) break;
        }
        if (total > 0) this.logger.info({ deleted: total }, 'recordings past their retention period deleted');
        await this.recordings.recoverInterrupted(now);
      } catch (error) {
        this.logger.warn({ err: error }, 'recording retention sweep failed; the next one tries again');
      }
    })();
    await this.running;
    this.running = undefined;
    return total;
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }
}

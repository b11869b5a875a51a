import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '@switchboard/config';
import { LocalRecordingStore, S3RecordingStore, type RecordingStore } from '@switchboard/recordings';
import type { RecordingStoreKind } from '@switchboard/persistence';

/**
 * The store new recordings go to (S3-compatible when RECORDINGS_S3_BUCKET is set, else local disk
 * under RECORDINGS_DIR), and the way back to a recording stored under another setting: each row
 * names its store, and local files stay readable after a switch to S3.
 */
@Injectable()
export class RecordingStores {
  readonly current: RecordingStore;
  private readonly local: LocalRecordingStore;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.local = new LocalRecordingStore(config.recordings.dir);
    const s3 = config.recordings.s3;
    this.current = s3 ? new S3RecordingStore(s3) : this.local;
  }

  /** The store a recording was written to, or undefined when this server is not configured for it. */
  forKind(kind: RecordingStoreKind): RecordingStore | undefined {
    if (kind === this.current.kind) return this.current;
    return kind === 'local' ? this.local : undefined;
  }
}

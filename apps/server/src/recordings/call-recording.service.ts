import { join } from 'node:path';
import { rm } from 'node:fs/promises';
import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '@switchboard/config';
import { RecordingConfigSchema } from '@switchboard/agent-config';
import { CallRecordingRepository, type CallRecordingRecord } from '@switchboard/persistence';
import { WAV_HEADER_BYTES } from '@switchboard/audio';
import { CallAudioRecorder, RecordingSpoolFile, type ByteRange, type RecordingReadStream } from '@switchboard/recordings';
import { PinoLogger } from 'nestjs-pino';
import { LiveCallRecording } from './live-call-recording';
import { RecordingStores } from './recording-stores';

export const RECORDING_CONTENT_TYPE = 'audio/wav';
/** An interrupted recording whose spool file no process has recovered by then is marked failed. */
export const RECORDING_RECOVERY_GIVE_UP_MS = 24 * 3600_000;

/** What a call edge knows when its agent starts. */
export interface RecordingStart {
  callId: string;
  organizationId: string;
  /** The agent config version the call runs with (its `recording` section decides). */
  agentConfig: unknown;
  callStartedAt: Date;
  /** 8000 for phone calls, 16000 for browser calls. */
  sampleRate: number;
  /** performance.now() when the caller's first frame arrived (the recording's first sample). */
  originMs: number;
}

/** Why a recording cannot be read now. */
export type RecordingUnavailable = 'not_found' | 'in_progress' | 'failed' | 'deleted' | 'store_not_configured';

export type RecordingRead = { ok: true; recording: CallRecordingRecord; stream: RecordingReadStream } | { ok: false; reason: RecordingUnavailable; recording: CallRecordingRecord | null };

/**
 * Call recordings from the first frame to the stored file: starts one per call whose agent config
 * asks for it, stores the finished file in the background (a call's end never waits for an
 * upload), and serves, deletes and expires them.
 */
@Injectable()
export class CallRecordingService {
  private readonly pending = new Set<Promise<void>>();
  /** Calls whose recording this process is writing or storing (never "recovered" from under it). */
  private readonly live = new Set<string>();

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly repository: CallRecordingRepository,
    private readonly stores: RecordingStores,
    private readonly logger: PinoLogger,
  ) {
    this.logger.setContext(CallRecordingService.name);
  }

  /** Starts recording when the agent's config says so; undefined otherwise (or when the config section is unreadable). */
  begin(start: RecordingStart): LiveCallRecording | undefined {
    const section = (start.agentConfig as { recording?: unknown } | null)?.recording ?? {};
    const parsed = RecordingConfigSchema.safeParse(section);
    if (!parsed.success || !parsed.data.enabled) return undefined;
    // A call taken back after a warm transfer streams again under the same id: its recording (up to
    // the hold) is the one kept; a second would write over the first's spool file while it is stored.
    if (this.live.has(start.callId)) return undefined;
    const { channels } = parsed.data;
    const store = this.stores.current;
    const objectKey = `${start.organizationId}/${start.callId}.wav`;
    const spool = RecordingSpoolFile.create(this.spoolPath(start.callId), {
      sampleRate: start.sampleRate,
      channelCount: channels === 'dual' ? 2 : 1,
    });
    const recorder = new CallAudioRecorder({
      sampleRate: start.sampleRate,
      channels,
      originMs: start.originMs,
      now: () => performance.now(),
      write: (samples) => spool.append(samples),
    });
    const originWallMs = Date.now() - (performance.now() - start.originMs);
    const row = {
      callId: start.callId,
      organizationId: start.organizationId,
      store: store.kind,
      objectKey,
      contentType: RECORDING_CONTENT_TYPE,
      channels,
      sampleRate: start.sampleRate,
      startedOffsetMs: Math.max(0, Math.round(originWallMs - start.callStartedAt.getTime())),
    };
    // Not awaited: the call starts now. finish() waits for it (and retries it once if it failed).
    const started = this.repository.start(row).then(
      () => true,
      (error: unknown) => {
        this.logger.warn({ callId: start.callId, err: error }, 'recording row not stored at the start; retried when the call ends');
        return false;
      },
    );
    this.live.add(start.callId);
    return new LiveCallRecording(recorder, spool, (finishedSpool, durationMs) =>
      this.track(this.store(row, started, finishedSpool, durationMs).finally(() => this.live.delete(start.callId))),
    );
  }

  /** Waits for recordings still being stored (shutdown: after the calls have ended). */
  async drain(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }

  async read(organizationId: string, callId: string, range?: ByteRange): Promise<RecordingRead> {
    const recording = await this.repository.find(organizationId, callId);
    const unavailable = this.unavailability(recording);
    if (unavailable || !recording) return { ok: false, reason: unavailable ?? 'not_found', recording };
    const store = this.stores.forKind(recording.store);
    if (!store) return { ok: false, reason: 'store_not_configured', recording };
    return { ok: true, recording, stream: await store.read(recording.objectKey, range) };
  }

  /** A call's recording row whatever its organization (a signed link names the call only). */
  async recordingOfCall(callId: string): Promise<CallRecordingRecord | null> {
    return this.repository.findByCall(callId);
  }

  /** The recording's row, or why it cannot be played. */
  async describe(organizationId: string, callId: string): Promise<{ recording: CallRecordingRecord | null; unavailable: RecordingUnavailable | undefined }> {
    const recording = await this.repository.find(organizationId, callId);
    return { recording, unavailable: this.unavailability(recording) };
  }

  /** Deletes the file and marks the row ('removed'); otherwise why there was nothing to delete. */
  async delete(organizationId: string, callId: string): Promise<'removed' | RecordingUnavailable> {
    const recording = await this.repository.find(organizationId, callId);
    if (!recording) return 'not_found';
    if (recording.status === 'recording') return 'in_progress';
    if (recording.status === 'deleted') return 'deleted';
    const store = this.stores.forKind(recording.store);
    if (!store) return 'store_not_configured';
    // The object first: a row marked deleted over a file still stored would hide it from the retention sweep.
    await store.delete(recording.objectKey);
    // A concurrent delete (or the retention sweep) may have marked it first: then it is gone all the same.
    return (await this.repository.markDeleted(organizationId, callId, new Date())) ? 'removed' : 'deleted';
  }

  /** Deletes up to `limit` recordings past their organization's retention period; returns how many. */
  async sweepRetention(now: Date, limit = 100): Promise<number> {
    let deleted = 0;
    for (const expired of await this.repository.expired(now, limit)) {
      const store = this.stores.forKind(expired.store);
      if (!store) continue;
      try {
        await store.delete(expired.objectKey);
        if (await this.repository.markDeleted(expired.organizationId, expired.callId, now)) deleted += 1;
      } catch (error) {
        this.logger.warn({ callId: expired.callId, err: error }, 'expired recording not deleted; the next sweep tries again');
      }
    }
    return deleted;
  }

  /**
   * Recordings of calls that ended over `graceMs` ago but were never stored: the process carrying
   * the call stopped first. When the spool file is on this process's disk, its header is repaired
   * and it is stored (what was written up to the stop, at most a second short); a recording whose
   * spool no process has recovered within RECORDING_RECOVERY_GIVE_UP_MS is marked failed.
   */
  async recoverInterrupted(now: Date, graceMs = 5 * 60_000): Promise<{ recovered: number; failed: number }> {
    let recovered = 0;
    let failed = 0;
    for (const recording of await this.repository.interrupted(new Date(now.getTime() - graceMs), 100)) {
      if (this.live.has(recording.callId)) continue; // still being stored by this process
      const format = { sampleRate: recording.sampleRate, channelCount: recording.channels === 'dual' ? 2 : 1 };
      const path = this.spoolPath(recording.callId);
      try {
        const bytes = await RecordingSpoolFile.repairHeader(path, format);
        if (bytes === undefined) {
          if (recording.createdAt.getTime() < now.getTime() - RECORDING_RECOVERY_GIVE_UP_MS) {
            await this.repository.fail(recording.callId, 'the process carrying the call stopped before the recording was stored, and no process had its spool file', now);
            failed += 1;
          }
          continue;
        }
        const store = this.stores.forKind(recording.store) ?? this.stores.current;
        const stored = await store.put(recording.objectKey, path, recording.contentType);
        const durationMs = Math.round((((stored.bytes - WAV_HEADER_BYTES) / (2 * format.channelCount)) * 1000) / format.sampleRate);
        if (await this.repository.complete(recording.callId, { bytes: stored.bytes, durationMs }, now)) recovered += 1;
        this.logger.warn({ callId: recording.callId, bytes: stored.bytes }, 'recording interrupted by a stop recovered from its spool file');
      } catch (error) {
        this.logger.warn({ callId: recording.callId, err: error }, 'interrupted recording not recovered; the next sweep tries again');
      }
    }
    return { recovered, failed };
  }

  private spoolPath(callId: string): string {
    return join(this.config.recordings.dir, '.spool', `${callId}.wav`);
  }

  private unavailability(recording: CallRecordingRecord | null): RecordingUnavailable | undefined {
    if (!recording) return 'not_found';
    if (recording.status === 'recording') return 'in_progress';
    if (recording.status === 'failed') return 'failed';
    if (recording.status === 'deleted') return 'deleted';
    return undefined;
  }

  private track(work: Promise<void>): void {
    this.pending.add(work);
    void work.finally(() => this.pending.delete(work));
  }

  /** Closes the spool file, hands it to the store and completes the row; a failure is recorded on the row, never thrown. */
  private async store(
    row: Parameters<CallRecordingRepository['start']>[0],
    started: Promise<boolean>,
    spool: RecordingSpoolFile,
    durationMs: number,
  ): Promise<void> {
    const { callId } = row;
    try {
      if (!(await started)) await this.repository.start(row);
    } catch (error) {
      this.logger.error({ callId, err: error }, 'recording dropped: its row could not be stored');
      await rm(spool.path, { force: true }).catch(() => undefined);
      return;
    }
    try {
      await spool.close();
      const store = this.stores.forKind(row.store) ?? this.stores.current;
      const { bytes } = await store.put(row.objectKey, spool.path, RECORDING_CONTENT_TYPE);
      await this.repository.complete(callId, { bytes, durationMs }, new Date());
      this.logger.info({ callId, bytes, durationMs }, 'call recording stored');
    } catch (error) {
      this.logger.error({ callId, err: error }, 'call recording could not be stored');
      await this.repository.fail(callId, error instanceof Error ? error.message : String(error), new Date()).catch(() => undefined);
    }
  }
}

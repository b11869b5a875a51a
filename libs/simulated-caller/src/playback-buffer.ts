import { MULAW_SILENCE } from '@switchboard/audio';
import { lastAudibleIndex } from './audible-mulaw';
import { ByteRecorder } from './byte-recorder';

/** mu-law at 8 kHz: one byte per sample. */
export const MULAW_BYTES_PER_MS = 8;

export type MarkEchoReason = 'played' | 'cleared';

export interface MarkEcho {
  name: string;
  /** `played`: all audio queued before the mark has been heard; `cleared`: a `clear` discarded it. */
  reason: MarkEchoReason;
}

type QueueItem = { kind: 'audio'; bytes: Uint8Array; offset: number } | { kind: 'mark'; name: string };

/**
 * Twilio's outbound playback buffer as the server sees it: `media` payloads queue up and play at
 * real time (8 bytes per ms), a `mark` is echoed once everything queued before it has played (at
 * once if nothing is queued), and `clear` drops the queue and echoes every outstanding mark.
 *
 * Pure with respect to time: every call takes `nowMs`, so the semantics are tested without timers
 * and the caller decides when to wake up (see `nextMarkDueMs`). What was actually heard is recorded
 * on a timeline that starts at `originMs`, with silence wherever the buffer ran dry.
 */
export class PlaybackBuffer {
  private readonly queue: QueueItem[] = [];
  private readonly played = new ByteRecorder();
  private queuedBytes = 0;
  private discardedBytes = 0;
  /** Where the last audible byte queued so far sits on the played timeline (bytes from `originMs`). */
  private audibleEndByte = 0;
  private lastAudibleArrival: number | null = null;
  private lastClear: number | null = null;

  constructor(private readonly originMs: number) {}

  /** Bytes queued and not yet played. */
  get pendingBytes(): number {
    return this.queuedBytes;
  }

  get playedBytes(): number {
    return this.played.byteLength;
  }

  get clearedBytes(): number {
    return this.discardedBytes;
  }

  get pendingMarks(): number {
    return this.queue.reduce((count, item) => count + (item.kind === 'mark' ? 1 : 0), 0);
  }

  /** When audio that can be heard (see AUDIBLE_LEVEL) last arrived, or null if none has. */
  get lastAudibleArrivalMs(): number | null {
    return this.lastAudibleArrival;
  }

  /** When the last `clear` came (the agent stopped itself: barge-in), or null if none has. */
  get lastClearMs(): number | null {
    return this.lastClear;
  }

  /** When the last audible audio queued so far has played (or was cleared): later, the caller hears only silence. */
  get audibleUntilMs(): number {
    return this.originMs + this.audibleEndByte / MULAW_BYTES_PER_MS;
  }

  /** Queues audio (kept by reference: pass a buffer that will not be reused). */
  enqueueAudio(bytes: Uint8Array, nowMs: number): MarkEcho[] {
    const echoes = this.advance(nowMs);
    const lastAudible = lastAudibleIndex(bytes);
    if (lastAudible >= 0) {
      // After advance() the queue starts at the played position, so its end is where `bytes` starts.
      this.audibleEndByte = this.played.byteLength + this.queuedBytes + lastAudible + 1;
      this.lastAudibleArrival = nowMs;
    }
    if (bytes.length > 0) {
      this.queue.push({ kind: 'audio', bytes, offset: 0 });
      this.queuedBytes += bytes.length;
    }
    return echoes;
  }

  /** Queues a mark; returns it at once (after any that were already due) when nothing is queued. */
  enqueueMark(name: string, nowMs: number): MarkEcho[] {
    const echoes = this.advance(nowMs);
    if (this.queue.length === 0) echoes.push({ name, reason: 'played' });
    else this.queue.push({ kind: 'mark', name });
    return echoes;
  }

  /** Drops queued audio; returns marks that had played by now, then every outstanding one as cleared. */
  clear(nowMs: number): MarkEcho[] {
    const echoes = this.advance(nowMs);
    for (const item of this.queue) {
      if (item.kind === 'mark') echoes.push({ name: item.name, reason: 'cleared' });
    }
    this.discardedBytes += this.queuedBytes;
    this.queue.length = 0;
    this.queuedBytes = 0;
    this.audibleEndByte = Math.min(this.audibleEndByte, this.played.byteLength);
    this.lastClear = nowMs;
    return echoes;
  }

  /** Plays everything due by `nowMs` into the recording; returns the marks reached, in order. */
  advance(nowMs: number): MarkEcho[] {
    const echoes: MarkEcho[] = [];
    // The epsilon keeps a wake-up at exactly nextMarkDueMs() from rounding down a byte.
    const targetBytes = Math.floor((nowMs - this.originMs) * MULAW_BYTES_PER_MS + 1e-6);
    for (;;) {
      const head = this.queue[0];
      if (head?.kind === 'mark') {
        echoes.push({ name: head.name, reason: 'played' });
        this.queue.shift();
        continue;
      }
      const wantedBytes = targetBytes - this.played.byteLength;
      if (wantedBytes <= 0) break;
      if (!head) {
        // Buffer ran dry: the caller hears silence until more audio arrives.
        this.played.appendFill(MULAW_SILENCE, wantedBytes);
        break;
      }
      const takeBytes = Math.min(wantedBytes, head.bytes.length - head.offset);
      this.played.append(head.bytes.subarray(head.offset, head.offset + takeBytes));
      head.offset += takeBytes;
      this.queuedBytes -= takeBytes;
      if (head.offset === head.bytes.length) this.queue.shift();
    }
    return echoes;
  }

  /** When the next queued mark falls due (its preceding audio will have played), or null if none. */
  nextMarkDueMs(): number | null {
    let bytesBefore = 0;
    for (const item of this.queue) {
      if (item.kind === 'mark') {
        return this.originMs + (this.played.byteLength + bytesBefore) / MULAW_BYTES_PER_MS;
      }
      bytesBefore += item.bytes.length - item.offset;
    }
    return null;
  }

  /** The mu-law the caller heard from `originMs` up to the last advance, silence included. */
  playedAudio(): Uint8Array {
    return this.played.toUint8Array();
  }
}

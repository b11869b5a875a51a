import { WebSocket, type RawData } from 'ws';
import { WEB_CALL_AUDIO, WEB_CALL_BYTES_PER_MS } from '../web-calls/web-call-protocol';
import type { TurnWindow } from './scenario-expectations';

const FRAME_SAMPLES = (WEB_CALL_AUDIO.sampleRate / 1000) * WEB_CALL_AUDIO.frameMs;
/** The agent has finished replying once its last audible audio has played and this long has passed. */
const REPLY_QUIET_MS = 2_000;
/** A frame whose loudest sample is below this (about -40 dBFS) is silence: an echo of the caller's pauses, padding. */
const AUDIBLE_PEAK = 330;
const STARTED_TIMEOUT_MS = 10_000;
const CLOSE_TIMEOUT_MS = 5_000;

export interface ScenarioCallInput {
  /** ws:// URL of this server's web-call socket. */
  url: string;
  callId: string;
  token: string;
  /** The call's start (epoch ms): transcript and tool offsets are measured from it. */
  callStartedAt: number;
  /** Each caller turn, 16 kHz mono PCM. */
  turns: readonly Int16Array[];
  turnTimeoutMs: number;
  signal: AbortSignal;
}

export interface ScenarioCallOutcome {
  /** One per turn the caller got to say (fewer than the turns when the call ended first). */
  windows: TurnWindow[];
  /** Turns after which no reply came within the turn timeout. */
  unanswered: number[];
}

/**
 * The simulated caller of a scenario test: a web-call client, as the console is one, speaking to
 * the agent over this server's own web-call socket, so the scenario runs through the real edge and
 * the agent's real engines. It sends audio in real time without a pause (speech, then silence, as a
 * microphone does), plays the agent's audio into a simulated speaker (marks echoed once played,
 * every queued mark echoed at a `clear`), and starts the next turn once the reply has been heard.
 */
export class ScenarioCaller {
  private readonly socket: WebSocket;
  private readonly queue: Int16Array[] = [];
  private started = false;
  private closed = false;
  /** When the last audible frame arrived, and when the simulated speaker finishes playing it. */
  private lastAudibleAt = 0;
  private audibleEndsAt = 0;
  private playbackEndsAt = 0;
  private readonly pendingMarks = new Map<string, NodeJS.Timeout>();
  private pacer: NodeJS.Timeout | undefined;
  private nextFrameAt = 0;
  private readonly silence = new Int16Array(FRAME_SAMPLES);

  private constructor(private readonly input: ScenarioCallInput) {
    this.socket = new WebSocket(input.url, { maxPayload: 1024 * 1024 });
    this.socket.on('message', (data, isBinary) => this.onMessage(data, isBinary));
    this.socket.on('close', () => this.onClosed());
    this.socket.on('error', () => this.onClosed());
  }

  static async run(input: ScenarioCallInput): Promise<ScenarioCallOutcome> {
    const caller = new ScenarioCaller(input);
    try {
      return await caller.converse();
    } finally {
      caller.stop();
    }
  }

  private async converse(): Promise<ScenarioCallOutcome> {
    const { input } = this;
    await this.until(() => this.socket.readyState === WebSocket.OPEN, STARTED_TIMEOUT_MS, 'the web-call socket did not open');
    this.socket.send(JSON.stringify({ type: 'start', callId: input.callId, token: input.token }));
    await this.until(() => this.started, STARTED_TIMEOUT_MS, 'the call did not start');
    this.startPacing();
    const windows: TurnWindow[] = [];
    const unanswered: number[] = [];
    for (const [index, speech] of input.turns.entries()) {
      if (this.closed) break;
      windows.push({ startMs: Date.now() - input.callStartedAt });
      this.speak(speech);
      await this.until(() => this.queue.length === 0 || this.closed, speech.length / 16 + 5_000, 'the caller audio was not sent');
      const spokeAt = Date.now();
      const replied = await this.waitForReply(spokeAt, input.turnTimeoutMs);
      if (!replied && !this.closed) unanswered.push(index);
    }
    if (!this.closed) {
      this.socket.send(JSON.stringify({ type: 'hangup' }));
      await this.until(() => this.closed, CLOSE_TIMEOUT_MS, 'the call did not end after hang-up').catch(() => this.socket.terminate());
    }
    return { windows, unanswered };
  }

  /** Whether a reply came and was heard to its end (or the call ended), within `timeoutMs`. */
  private async waitForReply(since: number, timeoutMs: number): Promise<boolean> {
    const deadline = since + timeoutMs;
    for (;;) {
      if (this.closed) return true;
      this.input.signal.throwIfAborted();
      const now = Date.now();
      const heardSomething = this.lastAudibleAt >= since;
      if (heardSomething && now >= this.audibleEndsAt + REPLY_QUIET_MS) return true;
      if (now >= deadline) return heardSomething;
      await this.pause(50);
    }
  }

  private speak(speech: Int16Array): void {
    for (let offset = 0; offset < speech.length; offset += FRAME_SAMPLES) {
      const frame = new Int16Array(FRAME_SAMPLES);
      frame.set(speech.subarray(offset, Math.min(offset + FRAME_SAMPLES, speech.length)));
      this.queue.push(frame);
    }
  }

  /** One 20 ms frame per tick, on a clock that does not drift: speech when queued, silence otherwise. */
  private startPacing(): void {
    this.nextFrameAt = performance.now();
    const tick = () => {
      if (this.closed) return;
      const now = performance.now();
      while (this.nextFrameAt <= now) {
        const frame = this.queue.shift() ?? this.silence;
        this.socket.send(Buffer.from(frame.buffer, frame.byteOffset, frame.byteLength));
        this.nextFrameAt += WEB_CALL_AUDIO.frameMs;
      }
      this.pacer = setTimeout(tick, Math.max(1, this.nextFrameAt - performance.now()));
    };
    tick();
  }

  private onMessage(data: RawData, isBinary: boolean): void {
    if (isBinary) {
      const frame = data as Buffer;
      const now = Date.now();
      this.playbackEndsAt = Math.max(this.playbackEndsAt, now) + frame.length / WEB_CALL_BYTES_PER_MS;
      if (isAudible(frame)) {
        this.lastAudibleAt = now;
        this.audibleEndsAt = this.playbackEndsAt;
      }
      return;
    }
    let message: { type?: unknown; name?: unknown };
    try {
      message = JSON.parse((data as Buffer).toString('utf8')) as typeof message;
    } catch {
      return;
    }
    if (message.type === 'started') this.started = true;
    if (message.type === 'mark' && typeof message.name === 'string') this.echoMarkWhenPlayed(message.name);
    if (message.type === 'clear') this.clearPlayback();
  }

  private echoMarkWhenPlayed(name: string): void {
    const timer = setTimeout(() => {
      this.pendingMarks.delete(name);
      this.send({ type: 'mark', name });
    }, Math.max(0, this.playbackEndsAt - Date.now()));
    this.pendingMarks.set(name, timer);
  }

  /** Barge-in: what was queued is not played; its marks are echoed at once, as Twilio does. */
  private clearPlayback(): void {
    this.playbackEndsAt = Date.now();
    this.audibleEndsAt = Math.min(this.audibleEndsAt, this.playbackEndsAt);
    for (const [name, timer] of this.pendingMarks) {
      clearTimeout(timer);
      this.send({ type: 'mark', name });
    }
    this.pendingMarks.clear();
  }

  private send(message: object): void {
    if (this.socket.readyState === WebSocket.OPEN) this.socket.send(JSON.stringify(message));
  }

  private onClosed(): void {
    this.closed = true;
    clearTimeout(this.pacer);
  }

  private stop(): void {
    clearTimeout(this.pacer);
    for (const timer of this.pendingMarks.values()) clearTimeout(timer);
    this.pendingMarks.clear();
    // Called last (after the hang-up was answered) or on a failure: nothing more will be sent.
    if (this.socket.readyState === WebSocket.CONNECTING || this.socket.readyState === WebSocket.OPEN) this.socket.terminate();
  }

  private async until(condition: () => boolean, timeoutMs: number, failure: string): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!condition()) {
      if (this.input.signal.aborted) throw new Error('the run was stopped');
      if (Date.now() >= deadline) throw new Error(failure);
      if (this.closed && !condition()) throw new Error(`${failure}: the call ended`);
      await this.pause(20);
    }
  }

  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => setTimeout(resolve, ms));
  }
}

function isAudible(pcm: Buffer): boolean {
  for (let offset = 0; offset + 1 < pcm.length; offset += 2) {
    if (Math.abs(pcm.readInt16LE(offset)) >= AUDIBLE_PEAK) return true;
  }
  return false;
}

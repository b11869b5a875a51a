import { WebSocket } from 'ws';

export interface WebCallClientOptions {
  /** Echo marks once their audio "played" in real time (true), or never (false: a client that plays nothing). */
  playInRealTime?: boolean;
}

/**
 * A browser-like web-call client in Node: opens the socket, sends `start`, paces PCM16 16 kHz audio
 * in 20 ms messages, plays what comes back into a real-time playback queue (marks echoed once the
 * audio before them has played, every queued mark echoed at a `clear`, as the console does).
 */
export class WebCallClient {
  readonly socket: WebSocket;
  readonly texts: Array<Record<string, unknown>> = [];
  /** Every binary message received, in order. */
  readonly frames: Buffer[] = [];
  closeCode: number | undefined;
  readonly closed: Promise<number>;
  readonly opened: Promise<void>;
  private queuedMs = 0;
  private playbackEndsAt = 0;
  private pendingMarks: Array<{ name: string; timer: NodeJS.Timeout }> = [];

  constructor(url: string, private readonly options: WebCallClientOptions = {}) {
    this.socket = new WebSocket(url);
    this.opened = new Promise((resolve, reject) => {
      this.socket.once('open', () => resolve());
      this.socket.once('error', reject);
    });
    this.closed = new Promise((resolve) => this.socket.once('close', (code) => resolve((this.closeCode = code))));
    this.socket.on('message', (data, isBinary) => {
      if (isBinary) return this.onAudio(data as Buffer);
      const message = JSON.parse((data as Buffer).toString('utf8')) as Record<string, unknown>;
      this.texts.push(message);
      if (message.type === 'mark') this.onMark(String(message.name));
      if (message.type === 'clear') this.onClear();
    });
  }

  sendJson(message: unknown): void {
    this.socket.send(JSON.stringify(message));
  }

  start(callId: string, token: string): void {
    this.sendJson({ type: 'start', callId, token });
  }

  /** Sends `samples` (16 kHz) in 20 ms messages, paced in real time; then `trailingSilenceMs` of silence. */
  async stream(samples: Int16Array, trailingSilenceMs = 0): Promise<void> {
    const all = new Int16Array(samples.length + trailingSilenceMs * 16);
    all.set(samples);
    const started = performance.now();
    for (let offset = 0, index = 0; offset < all.length; offset += 320, index++) {
      const frame = all.subarray(offset, Math.min(offset + 320, all.length));
      if (this.socket.readyState !== WebSocket.OPEN) return;
      this.socket.send(Buffer.from(frame.buffer, frame.byteOffset, frame.byteLength));
      const due = started + (index + 1) * 20 - performance.now();
      if (due > 0) await new Promise((resolve) => setTimeout(resolve, due));
    }
  }

  async waitFor(predicate: (message: Record<string, unknown>) => boolean, timeoutMs: number): Promise<Record<string, unknown>> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.texts.find(predicate);
      if (found) return found;
      if (Date.now() > deadline) throw new Error(`no matching message within ${timeoutMs} ms; got ${JSON.stringify(this.texts.slice(-5))}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  /** Audio received so far as samples. */
  received(): Int16Array {
    const bytes = Buffer.concat(this.frames);
    return new Int16Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
  }

  private onAudio(frame: Buffer): void {
    this.frames.push(frame);
    const now = performance.now();
    this.playbackEndsAt = Math.max(this.playbackEndsAt, now) + frame.length / 32;
    this.queuedMs += frame.length / 32;
  }

  private onMark(name: string): void {
    if (this.options.playInRealTime === false) return;
    const delay = Math.max(0, this.playbackEndsAt - performance.now());
    const timer = setTimeout(() => {
      this.pendingMarks = this.pendingMarks.filter((mark) => mark.name !== name);
      if (this.socket.readyState === WebSocket.OPEN) this.sendJson({ type: 'mark', name });
    }, delay);
    this.pendingMarks.push({ name, timer });
  }

  private onClear(): void {
    this.playbackEndsAt = performance.now();
    const discarded = this.pendingMarks;
    this.pendingMarks = [];
    for (const mark of discarded) {
      clearTimeout(mark.timer);
      this.sendJson({ type: 'mark', name: mark.name });
    }
  }

  close(): void {
    for (const mark of this.pendingMarks) clearTimeout(mark.timer);
    this.socket.close();
  }
}

/**
 * In-process scripted implementations of the engine and call-edge interfaces a pipeline session
 * runs on, so its specs can drive a whole call (caller audio, transcripts, model tokens, synthesis,
 * the call's mark echoes) deterministically and look at everything it did.
 */
import type { AgentAudioOutput, AgentCallContext, CallControl } from '@switchboard/conversation';
import type { AsrEngine, AsrPartial, AsrResult, AsrSession, LlmEngine, LlmEvent, LlmRequest, TtsEngine, TtsStream, VadFrame, VadListener, VadStream } from '@switchboard/inference';
import { EngineError, QueuedTtsStream, VadListeners } from '@switchboard/inference';

/** Captured at load, before a spec installs fake timers, so `settle()` still yields to the event loop. */
const realSetImmediate = setImmediate;

/** Lets every promise chain that is ready run to its end (fake timers never fire from here). */
export async function settle(rounds = 3): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise<void>((resolve) => realSetImmediate(resolve));
}

// ---- caller audio + VAD ------------------------------------------------------------------------

/** A phone call delivers 20 ms frames: 160 samples at 8 kHz. */
export const CALLER_FRAME_SAMPLES = 160;
const LOUD_AMPLITUDE = 8000;

/** A 20 ms frame of the caller talking (a loud square wave) or of silence. */
export function callerFrame(loud: boolean): Int16Array {
  const frame = new Int16Array(CALLER_FRAME_SAMPLES);
  if (loud) for (let i = 0; i < frame.length; i++) frame[i] = i % 2 === 0 ? LOUD_AMPLITUDE : -LOUD_AMPLITUDE;
  return frame;
}

/** Loud chunks are speech: more than half of the samples at speaking level. */
export function loudnessProbability(chunk: Int16Array): number {
  let loud = 0;
  for (const sample of chunk) if (Math.abs(sample) >= LOUD_AMPLITUDE / 2) loud++;
  return loud * 2 > chunk.length ? 0.95 : 0.02;
}

/**
 * A VAD that decides each 32 ms chunk (256 samples at 8 kHz) with `probabilityOf`, like Silero's
 * framing. Frames are delivered a microtask after the push, in order, as a real stream's are after
 * its inference run.
 */
export class ScriptedVad implements VadStream {
  readonly sampleRate = 8000;
  readonly chunkSamples = 256;
  closed = false;
  private held = new Int16Array(0);
  private nextIndex = 0;
  private readonly listeners = new VadListeners();
  private pending = 0;
  /** Set: every push's chunks fail with it (the inference runtime went away). */
  failure: Error | undefined;

  constructor(
    readonly callId: string,
    private readonly probabilityOf: (chunk: Int16Array) => number = loudnessProbability,
  ) {}

  push(pcm8k: Int16Array): void {
    if (this.closed) throw new Error(`VAD stream ${this.callId} is closed`);
    const joined = new Int16Array(this.held.length + pcm8k.length);
    joined.set(this.held);
    joined.set(pcm8k, this.held.length);
    const frames: VadFrame[] = [];
    let at = 0;
    for (; at + this.chunkSamples <= joined.length; at += this.chunkSamples) {
      const index = this.nextIndex++;
      const chunkMs = (this.chunkSamples / this.sampleRate) * 1000;
      const probability = this.probabilityOf(joined.subarray(at, at + this.chunkSamples));
      frames.push({ index, startMs: index * chunkMs, endMs: (index + 1) * chunkMs, probability, queueWaitMs: 0, runMs: 0 });
    }
    this.held = joined.slice(at);
    if (frames.length === 0) return;
    this.pending += 1;
    queueMicrotask(() => {
      this.pending -= 1;
      if (!this.closed && this.failure) this.listeners.fail(this.failure);
      else if (!this.closed) for (const frame of frames) this.listeners.deliver(frame);
      if (this.pending === 0) this.listeners.drained();
    });
  }

  listen(listener: VadListener): () => void {
    return this.listeners.add(listener);
  }

  drained(): Promise<void> {
    return this.listeners.whenDrained(this.pending === 0 || this.closed);
  }

  reset(): void {}

  close(): void {
    this.closed = true;
    this.listeners.clear();
  }
}

// ---- ASR -----------------------------------------------------------------------------------------

export class ScriptedAsrSession implements AsrSession {
  pushedSamples = 0;
  /** Sum of |sample| over everything pushed: 0 means the recogniser was handed silence. */
  pushedEnergy = 0;
  cancelled = false;
  finished = false;
  private readonly listeners: ((partial: AsrPartial) => void)[] = [];

  constructor(private readonly transcript: () => Promise<string>) {}

  pushAudio(pcm16k: Int16Array): void {
    this.pushedSamples += pcm16k.length;
    for (const sample of pcm16k) this.pushedEnergy += Math.abs(sample);
  }

  onPartial(listener: (partial: AsrPartial) => void): void {
    this.listeners.push(listener);
  }

  /** The recogniser's interim guess, as a streaming engine would report it. */
  emitPartial(text: string, stable = true): void {
    for (const listener of this.listeners) listener({ text, stable });
  }

  async finish(): Promise<AsrResult> {
    this.finished = true;
    const text = await this.transcript();
    return { text, timings: { totalMs: 1 }, audioSeconds: this.pushedSamples / 16000 };
  }

  cancel(): void {
    this.cancelled = true;
  }
}

/** Each finished utterance is transcribed as the next text queued with `willHear` ('' when none). */
export class ScriptedAsr implements AsrEngine {
  readonly name = 'scripted-asr';
  readonly sampleRate = 16000 as const;
  readonly sessions: ScriptedAsrSession[] = [];
  private readonly transcripts: (string | Error)[] = [];

  constructor(readonly supportsPartials = false) {}

  willHear(...transcripts: (string | Error)[]): void {
    this.transcripts.push(...transcripts);
  }

  createSession(): AsrSession {
    const session = new ScriptedAsrSession(async () => {
      const next = this.transcripts.shift() ?? '';
      if (next instanceof Error) throw next;
      return next;
    });
    this.sessions.push(session);
    return session;
  }
}

// ---- LLM -----------------------------------------------------------------------------------------

/**
 * One scripted model answer: strings are text deltas, LlmEvents are yielded as they are, a promise
 * is waited for (a stall the test ends), an Error is thrown mid-stream. A `done` event ends it.
 * Aborting the request's signal ends a stall with a 'cancelled' EngineError, as real engines do.
 */
export type LlmStep = string | LlmEvent | Promise<void> | Error;

export class ScriptedLlm implements LlmEngine {
  readonly name = 'scripted-llm';
  /** Every request as it was made (messages deep-copied), with its live abort signal. */
  readonly requests: LlmRequest[] = [];
  private readonly answers: LlmStep[][] = [];

  /** Queues the answers to the next requests, in order. */
  willAnswer(...answers: LlmStep[][]): void {
    this.answers.push(...answers);
  }

  stream(request: LlmRequest): AsyncIterable<LlmEvent> {
    this.requests.push({ ...request, messages: structuredClone(request.messages) });
    const steps = this.answers.shift() ?? [new Error(`scripted-llm: no answer scripted for request ${this.requests.length}`)];
    return play(steps, request.signal);
  }
}

async function* play(steps: LlmStep[], signal: AbortSignal | undefined): AsyncGenerator<LlmEvent> {
  const cancelled = (): EngineError => new EngineError('scripted-llm', 'cancelled', 'scripted-llm: request aborted', false);
  for (const step of steps) {
    if (signal?.aborted) throw cancelled();
    if (typeof step === 'string') yield { type: 'text', delta: step };
    else if (step instanceof Error) throw step;
    else if (step instanceof Promise) {
      await new Promise<void>((resolve, reject) => {
        void step.then(resolve);
        signal?.addEventListener('abort', () => reject(cancelled()), { once: true });
      });
    } else yield step;
  }
  yield { type: 'done', finishReason: 'stop', usage: null, timings: { totalMs: 1 } };
}

/** A promise the test resolves when it chooses. */
export function gate(): { opened: Promise<void>; open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

// ---- TTS -----------------------------------------------------------------------------------------

/** 2 ms of audio per character, so every chunk of a reply (< 125 characters) is shorter than the 250 ms mark interval: one mark per segment. */
const TTS_SAMPLES_PER_CHAR = 32;
const TTS_CHUNK_SAMPLES = 320;

export class FakeTts implements TtsEngine {
  readonly name = 'fake-tts';
  readonly sampleRate = 16000;
  /** Every text asked for, in order. */
  readonly texts: string[] = [];
  private readonly failures = new Map<string, EngineError>();
  /** While set, synthesis started from then on gives no audio until it settles (a slow voice). */
  stallUntil: Promise<void> | undefined;

  /** Synthesis of exactly `text` will fail with `error`. */
  failOn(text: string, error: EngineError): void {
    this.failures.set(text, error);
  }

  synthesize(text: string, options: { callId: string; voice?: string; signal?: AbortSignal }): TtsStream {
    this.texts.push(text);
    const failure = this.failures.get(text);
    const stall = this.stallUntil;
    return new QueuedTtsStream(
      this.sampleRate,
      this.name,
      async (sink) => {
        await Promise.resolve();
        await stall;
        if (failure) throw failure;
        const total = text.length * TTS_SAMPLES_PER_CHAR;
        for (let sent = 0; sent < total && !sink.signal.aborted; sent += TTS_CHUNK_SAMPLES) {
          sink.emit(new Int16Array(Math.min(TTS_CHUNK_SAMPLES, total - sent)).fill(1000));
        }
        return { timings: { totalMs: 1 }, characters: text.length, audioSeconds: total / this.sampleRate };
      },
      options.signal,
    );
  }
}

// ---- call edge -----------------------------------------------------------------------------------

export type OutputEntry = { type: 'play'; samples: number } | { type: 'mark'; name: string } | { type: 'end' } | { type: 'clear' };

/**
 * Stands in for the call's playback buffer: records play/mark/clear, and the test echoes the pending
 * marks as played when it decides the audio was heard. clear() echoes every pending mark as
 * cleared, asynchronously, as a phone call's edge does.
 */
export class FakeAudioOutput implements AgentAudioOutput {
  readonly log: OutputEntry[] = [];
  private pending: string[] = [];
  private echo: ((name: string, cleared: boolean) => void) | undefined;

  /** Where echoes go (the session's onMarkEchoed). */
  connect(echo: (name: string, cleared: boolean) => void): void {
    this.echo = echo;
  }

  play(pcm: Int16Array): void {
    this.log.push({ type: 'play', samples: pcm.length });
  }

  /** mu-law at 8 kHz: one byte per sample. */
  playMulaw(mulaw: Uint8Array): void {
    this.log.push({ type: 'play', samples: mulaw.length });
  }

  endOfUtterance(): void {
    this.log.push({ type: 'end' });
  }

  mark(name: string): void {
    this.log.push({ type: 'mark', name });
    this.pending.push(name);
  }

  clear(): void {
    this.log.push({ type: 'clear' });
    const cleared = this.pending.splice(0);
    void Promise.resolve().then(() => {
      for (const name of cleared) this.echo?.(name, true);
    });
  }

  /** Marks placed but not yet echoed, oldest first. */
  get pendingMarks(): readonly string[] {
    return this.pending;
  }

  get marks(): string[] {
    return this.log.flatMap((entry) => (entry.type === 'mark' ? [entry.name] : []));
  }

  get playedSamples(): number {
    return this.log.reduce((sum, entry) => sum + (entry.type === 'play' ? entry.samples : 0), 0);
  }

  get clears(): number {
    return this.log.filter((entry) => entry.type === 'clear').length;
  }

  /** The log as event names: `play`, `mark:<name>`, `end`, `clear`. */
  get sequence(): string[] {
    return this.log.map((entry) => (entry.type === 'mark' ? `mark:${entry.name}` : entry.type));
  }

  /** The caller heard the audio up to the `count` oldest pending marks (all of them by default). */
  echoPlayed(count = this.pending.length): void {
    for (const name of this.pending.splice(0, count)) this.echo?.(name, false);
  }
}

export class FakeCallControl implements CallControl {
  readonly hangUps: string[] = [];
  readonly transfers: string[] = [];

  async hangUp(reason: string): Promise<void> {
    this.hangUps.push(reason);
  }

  async transfer(to: string): Promise<void> {
    this.transfers.push(to);
  }
}

// ---- a call per test -----------------------------------------------------------------------------

/** Runs each test on Jest's fake clock and ends its call afterwards; returns how a test starts its call. */
export function useCallPerTest<Options, Call extends { session: { close(reason: string): void } }>(create: (options?: Options) => Call): (options?: Options) => Promise<Call> {
  let call: Call | undefined;

  beforeEach(() => {
    jest.useFakeTimers({ doNotFake: ['nextTick', 'queueMicrotask'] });
  });

  afterEach(() => {
    call?.session.close('test_over');
    call = undefined;
    jest.useRealTimers();
  });

  return async (options) => {
    call = create(options);
    await settle();
    return call;
  };
}

/** The context a scripted call's session gets: fixed ids and numbers, the harness's recorder, call control and end log. */
export function scriptedCallContext(
  config: AgentCallContext['config'],
  call: { recorder: AgentCallContext['recorder']; callControl: AgentCallContext['callControl']; endReasons: string[] },
): AgentCallContext {
  return {
    callId: 'call-1',
    organizationId: 'org-1',
    agentId: 'agent-1',
    agentConfigVersion: 1,
    config,
    streamParameters: {},
    callerNumber: '+15550001111',
    calledNumber: '+15550002222',
    callStartedAt: new Date(),
    recorder: call.recorder,
    callControl: call.callControl,
    endCall: (reason) => call.endReasons.push(reason),
  };
}

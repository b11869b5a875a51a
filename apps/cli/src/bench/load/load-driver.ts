import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { decodeMulaw } from '@switchboard/audio';
import { ARRIVAL_SPACING_MS, FIXTURES, SILENCE_AFTER_MS, UTTERANCES_PER_CALL } from './load-settings';
import { FRAME_BYTES, FRAME_MS, ScaledCall, type CallTarget, type ScaledCallOutcome, type ScriptedUtterance } from './scaled-call';

/** A sample louder than this (of 32767) is speech: flite's padding is digital silence. */
const SPEECH_LEVEL = 300;

/** The fixtures as frames, base64 once for every call, with where each one's speech ends. */
export function loadUtterances(fixturesDir = join('test', 'fixtures', 'speech')): ScriptedUtterance[] {
  return FIXTURES.map((name) => {
    const bytes = readFileSync(join(fixturesDir, `${name}.8k.ulaw`));
    const frames = Math.ceil(bytes.length / FRAME_BYTES);
    const padded = Buffer.alloc(frames * FRAME_BYTES, 0xff);
    bytes.copy(padded);
    const pcm = decodeMulaw(padded);
    let lastSpeech = 0;
    for (let i = 0; i < pcm.length; i++) if (Math.abs(pcm[i] as number) > SPEECH_LEVEL) lastSpeech = i;
    const payloads = Array.from({ length: frames }, (_, frame) => padded.subarray(frame * FRAME_BYTES, (frame + 1) * FRAME_BYTES).toString('base64'));
    return { payloads, speechEndFrame: Math.floor(lastSpeech / FRAME_BYTES) };
  });
}

export interface LevelOutcome {
  calls: ScaledCallOutcome[];
  elapsedMs: number;
  /** The load driver's own event loop: if it lags, the callers' audio is late, not the server. */
  driverEventLoopP99Ms: number;
  /** Frames the shared clock had to send late (more than one frame behind). */
  lateTicks: number;
}

/** Deterministic per-call randomness, so two runs of a level place the same calls. */
function seeded(seed: number): () => number {
  let state = seed >>> 0 || 1;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

/**
 * Places `count` calls against the server, `arrivalSpacingMs` apart (default ARRIVAL_SPACING_MS), all driven by one 20 ms
 * clock in this process. Resolves once every call has hung up (or failed).
 */
export async function runLevel(count: number, target: CallTarget, utterances: readonly ScriptedUtterance[], arrivalSpacingMs = ARRIVAL_SPACING_MS): Promise<LevelOutcome> {
  const random = seeded(count * 7919);
  const silencePayload = Buffer.alloc(FRAME_BYTES, 0xff).toString('base64');
  const calls = Array.from({ length: count }, (_, index) => {
    const script = Array.from({ length: UTTERANCES_PER_CALL }, (_, turn) => utterances[(index + turn) % utterances.length] as ScriptedUtterance);
    const silences = script.map(() => SILENCE_AFTER_MS[0] + random() * (SILENCE_AFTER_MS[1] - SILENCE_AFTER_MS[0]));
    return new ScaledCall(target, script, silences, silencePayload, `+1555${String(2_000_000 + index).padStart(7, '0')}`);
  });
  const active = new Set<ScaledCall>();
  const loopDelay = monitorEventLoopDelay({ resolution: 10 });
  loopDelay.enable();
  const started = performance.now();
  let ticks = 0;
  let lateTicks = 0;
  let timer: NodeJS.Timeout | undefined;
  const clock = (): void => {
    const now = performance.now();
    let due = 0;
    while (started + ticks * FRAME_MS <= now) {
      for (const call of active) call.tick(now);
      ticks += 1;
      due += 1;
    }
    if (due > 1) lateTicks += due - 1;
    timer = setTimeout(clock, Math.max(0, started + ticks * FRAME_MS - performance.now()));
  };
  clock();
  await Promise.all(
    calls.map(async (call, index) => {
      await new Promise((resolve) => setTimeout(resolve, index * arrivalSpacingMs));
      await call.connect();
      active.add(call);
      await call.done;
      active.delete(call);
    }),
  );
  clearTimeout(timer);
  loopDelay.disable();
  return {
    calls: calls.map((call) => call.outcome()),
    elapsedMs: performance.now() - started,
    driverEventLoopP99Ms: loopDelay.percentile(99) / 1e6,
    lateTicks,
  };
}

/**
 * One simulated phone call through the real media path: `turns` questions, each answered and
 * heard to the end, then a barge-in (a question, and a second utterance started the moment the
 * answer's first frame reaches the caller), whose own answer is heard to the end before hang-up.
 * Every wait is bounded; a call that fails says why and still hangs up.
 *
 * Runs on the caller thread (see caller-worker.ts): the waits on the server's progress go through
 * `server`, which asks the main thread, where the server and its recorders are.
 */
import { STREAM_PARAM_CALL_ID, STREAM_PARAM_TOKEN } from '@switchboard/telephony';
import { SimulatedTwilioCall } from '@switchboard/simulated-caller';
import type { CallerFixtures, CallerUtterance } from './caller-fixtures';
import type { CallerSideOutcome, CallRequest } from './caller-protocol';
import { STEP_TIMEOUT_MS } from './latency-bench-settings';

/** The server's progress, as the caller may wait on it. */
export interface ServerProgress {
  /** Resolves once the call's recorder holds `count` latency records (the agent finished reply `count`); rejects after `timeoutMs`. */
  whenLatencies(callId: string, count: number, timeoutMs: number): Promise<void>;
}

export const HANGUP_TIMEOUT_MS = 5000;

export async function runScriptedCall(call: CallRequest, server: ServerProgress, fixtures: CallerFixtures): Promise<CallerSideOutcome> {
  const { callId, turns } = call;
  const caller = new SimulatedTwilioCall({ serverUrl: call.baseUrl, authToken: 'latency-bench', from: '+15550100001', to: '+15550100002' });
  const outcome: CallerSideOutcome = { callId, bargeInSpeechSentAtMs: undefined };
  // Each call starts at a different fixture, so concurrent calls do not speak in lockstep.
  const pick = (list: readonly CallerUtterance[], step: number): CallerUtterance => list[(call.callIndex + step) % list.length]!;
  try {
    await caller.connectMedia({
      stream: { url: call.mediaUrl, parameters: { [STREAM_PARAM_CALL_ID]: callId, [STREAM_PARAM_TOKEN]: call.streamToken } },
      timeoutMs: STEP_TIMEOUT_MS,
    });
    for (let turn = 1; turn <= turns; turn++) {
      await completed(caller.streamAudio(pick(fixtures.questions, turn).mulaw), 'question');
      await server.whenLatencies(callId, turn, STEP_TIMEOUT_MS);
    }
    await completed(caller.streamAudio(pick(fixtures.questions, turns + 1).mulaw), 'question before the barge-in');
    await caller.waitForMessage((message) => message.event === 'media', STEP_TIMEOUT_MS);
    const bargeIn = await completed(caller.streamAudio(pick(fixtures.bargeIns, turns + 2).mulaw), 'barge-in');
    outcome.bargeInSpeechSentAtMs = bargeIn.startedAtMs ?? undefined;
    await server.whenLatencies(callId, turns + 1, STEP_TIMEOUT_MS);
  } catch (error) {
    outcome.error = error instanceof Error ? error.message : String(error);
  } finally {
    await caller.hangup({ closeTimeoutMs: HANGUP_TIMEOUT_MS }).catch(() => undefined);
  }
  return outcome;
}

async function completed<T extends { completed: boolean }>(sending: Promise<T>, what: string): Promise<T> {
  const timing = await sending;
  if (!timing.completed) throw new Error(`the ${what} utterance was cut off (the media socket closed)`);
  return timing;
}

/**
 * One simulated phone call through the real media path: `turns` questions, each answered and
 * heard to the end, then a barge-in (a question, and a second utterance started the moment the
 * answer's first frame reaches the caller), whose own answer is heard to the end before hang-up.
 * Every wait is bounded; a call that fails says why and still hangs up.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { STREAM_PARAM_CALL_ID, STREAM_PARAM_TOKEN } from '@switchboard/telephony';
import { SimulatedTwilioCall } from '@switchboard/testing';
import type { CallerFixtures, CallerUtterance } from './caller-fixtures';
import { BENCH_AGENT_CONFIG, STEP_TIMEOUT_MS } from './latency-bench-settings';
import type { BenchCallLedger, MediaServerRig } from './media-server-rig';

export interface ScriptedCallOutcome {
  callId: string;
  ledger: BenchCallLedger;
  /** performance.now() when the barge-in utterance's first frame was sent; undefined if it never was. */
  bargeInSpeechSentAtMs: number | undefined;
  /** The call's end reason as finalised by the server, or undefined when it was not finalised in time. */
  endReason: string | undefined;
  error?: string;
}

const HANGUP_TIMEOUT_MS = 5000;

export async function runScriptedCall(rig: MediaServerRig, fixtures: CallerFixtures, callIndex: number, turns: number): Promise<ScriptedCallOutcome> {
  const callId = randomUUID();
  const streamToken = randomBytes(24).toString('base64url');
  const ledger = rig.register(callId, streamToken, BENCH_AGENT_CONFIG);
  const caller = new SimulatedTwilioCall({ serverUrl: rig.baseUrl, authToken: 'latency-bench', from: '+15550100001', to: '+15550100002' });
  const outcome: ScriptedCallOutcome = { callId, ledger, bargeInSpeechSentAtMs: undefined, endReason: undefined };
  // Each call starts at a different fixture, so concurrent calls do not speak in lockstep.
  const pick = (list: readonly CallerUtterance[], step: number): CallerUtterance => list[(callIndex + step) % list.length]!;
  try {
    await caller.connectMedia({
      stream: { url: rig.mediaUrl(callId), parameters: { [STREAM_PARAM_CALL_ID]: callId, [STREAM_PARAM_TOKEN]: streamToken } },
      timeoutMs: STEP_TIMEOUT_MS,
    });
    for (let turn = 1; turn <= turns; turn++) {
      await completed(caller.streamAudio(pick(fixtures.questions, turn).mulaw), 'question');
      await ledger.recorder.whenLatencies(turn, STEP_TIMEOUT_MS);
    }
    await completed(caller.streamAudio(pick(fixtures.questions, turns + 1).mulaw), 'question before the barge-in');
    await caller.waitForMessage((message) => message.event === 'media', STEP_TIMEOUT_MS);
    const bargeIn = await completed(caller.streamAudio(pick(fixtures.bargeIns, turns + 2).mulaw), 'barge-in');
    outcome.bargeInSpeechSentAtMs = bargeIn.startedAtMs ?? undefined;
    await ledger.recorder.whenLatencies(turns + 1, STEP_TIMEOUT_MS);
  } catch (error) {
    outcome.error = error instanceof Error ? error.message : String(error);
  } finally {
    await caller.hangup({ closeTimeoutMs: HANGUP_TIMEOUT_MS }).catch(() => undefined);
    outcome.endReason = await Promise.race([ledger.finalised, delay(HANGUP_TIMEOUT_MS).then(() => undefined)]);
  }
  return outcome;
}

async function completed<T extends { completed: boolean }>(sending: Promise<T>, what: string): Promise<T> {
  const timing = await sending;
  if (!timing.completed) throw new Error(`the ${what} utterance was cut off (the media socket closed)`);
  return timing;
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

/**
 * What the simulated callers say: the repository's speech fixtures (real speech, 8 kHz mu-law,
 * flite with 0.2 s of silence each side). For barge-in the utterance is cut to start where its
 * speech starts (measured from the audio's energy), so the utterance's first frame is the first
 * frame of caller speech the bench times from.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { decodeMulaw } from '@switchboard/audio';
import { SPEECH_FIXTURES, speechBoundsMs } from '@switchboard/testing';

const FIXTURE_DIR = join(__dirname, '..', '..', '..', '..', '..', 'test', 'fixtures', 'speech');
const SAMPLES_PER_MS = 8;
/**
 * Not used to barge in: it opens with "Hi," and a pause, a first run of speech (about 384 ms to
 * the VAD) shorter than interruptions.minSpeechMs, which is rightly not an interruption. The
 * barge-in would then be timed from a word that did not count, measuring the sentence rather
 * than the platform.
 */
const OPENS_WITH_A_SHORT_WORD = new Set<string>(['order-status']);

export interface CallerUtterance {
  name: string;
  mulaw: Uint8Array;
}

export interface CallerFixtures {
  /** Whole fixtures, lead-in silence included: the question turns. */
  questions: CallerUtterance[];
  /** Those that open with over minSpeechMs of unbroken speech, from their first speech sample: the barge-in utterances. */
  bargeIns: CallerUtterance[];
}

export function loadCallerFixtures(): CallerFixtures {
  const questions = SPEECH_FIXTURES.map((name) => ({ name, mulaw: new Uint8Array(readFileSync(join(FIXTURE_DIR, `${name}.8k.ulaw`))) }));
  const bargeIns = questions
    .filter(({ name }) => !OPENS_WITH_A_SHORT_WORD.has(name))
    .map(({ name, mulaw }) => ({ name, mulaw: mulaw.subarray(speechBoundsMs(decodeMulaw(mulaw)).startMs * SAMPLES_PER_MS) }));
  return { questions, bargeIns };
}

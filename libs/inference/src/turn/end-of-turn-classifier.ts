import type { RunContext } from '../contracts';

/**
 * A Smart Turn-style end-of-turn model: given the caller's audio up to now (16 kHz PCM, the end
 * of the current utterance including the silence so far), the probability that the speaker has
 * finished their turn. Lets turn detection end a turn before the full silence timeout.
 */
export interface EndOfTurnClassifier {
  readonly name: string;
  probability(audio16k: Int16Array, context?: RunContext): Promise<number>;
}

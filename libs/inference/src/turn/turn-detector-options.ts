import { SpeechHysteresis } from './speech-hysteresis';
import type { EndOfTurnClassifier } from './end-of-turn-classifier';

export interface TurnDetectorOptions {
  /** Speech starts when a chunk's probability reaches this; default 0.5. */
  threshold?: number;
  /** Speech stops when a chunk's probability drops below this (hysteresis); default threshold - 0.15. */
  negativeThreshold?: number;
  /** Speech must last this long to count (shorter blips are ignored); default 250. */
  minSpeechMs?: number;
  /** Silence that ends a turn; default 500. */
  minSilenceMs?: number;
  /** Audio kept from before the speech start, so the first phoneme is not clipped; default 300. */
  prefixPaddingMs?: number;
  /** A turn longer than this ends anyway ('max_duration'); default 60 000. */
  maxTurnMs?: number;
  /** Optional end-of-turn model, asked once per pause after eotMinSilenceMs of silence. */
  endOfTurnClassifier?: EndOfTurnClassifier;
  /** Silence before the classifier is asked; default 200, must be under minSilenceMs. */
  eotMinSilenceMs?: number;
  /** The classifier's probability at which the turn ends early; default 0.5. */
  eotThreshold?: number;
  /** The most audio (the end of the utterance) given to the classifier; default 8000. */
  eotMaxAudioMs?: number;
}

export type ResolvedTurnDetectorOptions = Required<Omit<TurnDetectorOptions, 'endOfTurnClassifier'>> & {
  endOfTurnClassifier: EndOfTurnClassifier | undefined;
};

export function resolveTurnDetectorOptions(options: TurnDetectorOptions): ResolvedTurnDetectorOptions {
  const threshold = options.threshold ?? 0.5;
  const resolved: ResolvedTurnDetectorOptions = {
    threshold,
    negativeThreshold: options.negativeThreshold ?? SpeechHysteresis.defaultNegativeThreshold(threshold),
    minSpeechMs: options.minSpeechMs ?? 250,
    minSilenceMs: options.minSilenceMs ?? 500,
    prefixPaddingMs: options.prefixPaddingMs ?? 300,
    maxTurnMs: options.maxTurnMs ?? 60_000,
    endOfTurnClassifier: options.endOfTurnClassifier,
    eotMinSilenceMs: options.eotMinSilenceMs ?? 200,
    eotThreshold: options.eotThreshold ?? 0.5,
    eotMaxAudioMs: options.eotMaxAudioMs ?? 8000,
  };
  const problems: string[] = [];
  const probability = (name: string, value: number): void => {
    if (!(value > 0 && value < 1)) problems.push(`${name} must be between 0 and 1 (exclusive), got ${value}`);
  };
  const duration = (name: string, value: number): void => {
    if (!(Number.isFinite(value) && value >= 0)) problems.push(`${name} must be a duration >= 0 ms, got ${value}`);
  };
  probability('threshold', resolved.threshold);
  probability('negativeThreshold', resolved.negativeThreshold);
  probability('eotThreshold', resolved.eotThreshold);
  if (resolved.negativeThreshold > resolved.threshold) problems.push(`negativeThreshold (${resolved.negativeThreshold}) must not exceed threshold (${resolved.threshold})`);
  for (const name of ['minSpeechMs', 'minSilenceMs', 'prefixPaddingMs', 'maxTurnMs', 'eotMinSilenceMs', 'eotMaxAudioMs'] as const) duration(name, resolved[name]);
  if (resolved.endOfTurnClassifier && resolved.eotMinSilenceMs >= resolved.minSilenceMs) {
    problems.push(`eotMinSilenceMs (${resolved.eotMinSilenceMs}) must be shorter than minSilenceMs (${resolved.minSilenceMs})`);
  }
  if (problems.length > 0) throw new RangeError(`invalid turn detection options: ${problems.join('; ')}`);
  return resolved;
}

/**
 * End-of-turn wait vs false cut-offs, with the VAD alone (no end-of-turn model) at three
 * minSilenceMs settings: the real Silero VAD (v5, 8 kHz, through the inference runtime) and the
 * real TurnDetector, fed the speech fixtures the way a call feeds them (20 ms frames).
 *
 * Each fixture is one caller utterance, so every turn after its first is a false cut-off (the
 * agent would have started talking over the caller). The end-of-turn wait is how long after the
 * turn's end the detector knew: the silence the caller sits through before the agent can answer.
 */
import { concatPcm16 } from '@switchboard/audio';
import { createInferenceRuntime, SileroVad, TurnDetector, type TurnEndedEvent } from '@switchboard/inference';
// The fixtures' loader and their speech bounds (measured from the audio's energy) are the ones the
// VAD and turn-detection specs check against; reusing them keeps one truth for these files.
import { loadSpeech8k, pushInFrames, silence, SPEECH_FIXTURES, speechBoundsMs } from '@switchboard/testing';

const SAMPLES_PER_MS = 8;
/** Silence after each utterance: longer than the longest setting plus a chunk, so every turn can end. */
export const TRAILING_SILENCE_MS = 1500;
const FRAME_SAMPLES = 20 * SAMPLES_PER_MS;

export interface EndOfTurnFixture {
  name: string;
  /** One caller utterance, 8 kHz 16-bit PCM. */
  pcm8k: Int16Array;
  /** Where the speech truly ends, if known; otherwise the last detected turn's end stands in. */
  speechEndMs?: number;
}

export interface EndOfTurnSetting {
  label: string;
  minSilenceMs: number;
}

export const END_OF_TURN_SETTINGS: readonly EndOfTurnSetting[] = [300, 500, 800].map((minSilenceMs) => ({ label: `minSilenceMs=${minSilenceMs}`, minSilenceMs }));

export interface FixtureTurns {
  fixture: string;
  turns: number;
  /** Last turn: detectedAtMs - endMs. Undefined when the fixture produced no turn. */
  eotWaitMs?: number;
  /** Last turn's endMs - the true speech end (positive: the VAD heard speech past it). */
  endGapMs?: number;
  speechEndSource: 'fixture' | 'last-turn';
}

export interface EndOfTurnRow {
  setting: EndOfTurnSetting;
  fixtures: number;
  turns: number;
  /** Sum over fixtures of (turns - 1) for those with more than one turn. */
  falseCutOffs: number;
  /** Fixtures that produced no turn at all. */
  missed: number;
  /** Over the fixtures with a turn; null when none had one. */
  eotWaitMsMean: number | null;
  eotWaitMsMax: number | null;
  endGapMsMean: number | null;
  /** The largest |endGapMs|. */
  endGapMsMaxAbs: number | null;
  /** detectedAtMs - the true speech end (eotWaitMs + endGapMs): the silence the caller really sits through. */
  heardWaitMsMean: number | null;
  perFixture: FixtureTurns[];
}

/** The repository's speech fixtures (test/fixtures/speech, 8 kHz mu-law), with their measured speech end. */
export function loadSpeechFixtures(): EndOfTurnFixture[] {
  return SPEECH_FIXTURES.map((name) => {
    const pcm8k = loadSpeech8k(name);
    return { name, pcm8k, speechEndMs: speechBoundsMs(pcm8k).endMs };
  });
}

/** Runs every fixture through a fresh TurnDetector per setting, one after another (deterministic). */
export async function measureEndOfTurn(vad: SileroVad, fixtures: readonly EndOfTurnFixture[], settings: readonly EndOfTurnSetting[] = END_OF_TURN_SETTINGS): Promise<EndOfTurnRow[]> {
  if (fixtures.length === 0) throw new RangeError('measureEndOfTurn needs at least one fixture');
  const rows: EndOfTurnRow[] = [];
  for (const setting of settings) {
    const perFixture: FixtureTurns[] = [];
    for (const fixture of fixtures) perFixture.push(await measureFixture(vad, fixture, setting));
    rows.push(summarise(setting, perFixture));
  }
  return rows;
}

/** Loads the runtime and the VAD, measures the repository's fixtures, and closes the runtime again. */
export async function runEndOfTurnReport(settings: readonly EndOfTurnSetting[] = END_OF_TURN_SETTINGS): Promise<EndOfTurnRow[]> {
  const quiet = { log: (): void => undefined, warn: (): void => undefined };
  const runtime = await createInferenceRuntime({ device: 'cpu', workers: 1, logger: quiet });
  try {
    return await measureEndOfTurn(await SileroVad.load(runtime), loadSpeechFixtures(), settings);
  } finally {
    await runtime.close();
  }
}

async function measureFixture(vad: SileroVad, fixture: EndOfTurnFixture, setting: EndOfTurnSetting): Promise<FixtureTurns> {
  const detector = new TurnDetector(vad.createStream(`eot-${setting.minSilenceMs}-${fixture.name}`), { minSilenceMs: setting.minSilenceMs });
  const turns: TurnEndedEvent[] = [];
  detector.onEvent((event) => {
    if (event.type === 'turn_ended') turns.push(event);
  });
  try {
    await pushInFrames((frame) => {
      detector.push(frame);
      return detector.drained();
    }, concatPcm16([fixture.pcm8k, silence(TRAILING_SILENCE_MS)]), FRAME_SAMPLES);
  } finally {
    detector.close();
  }
  const last = turns[turns.length - 1];
  const speechEndSource = fixture.speechEndMs === undefined ? 'last-turn' : 'fixture';
  if (!last) return { fixture: fixture.name, turns: 0, speechEndSource };
  const speechEndMs = fixture.speechEndMs ?? last.endMs;
  return { fixture: fixture.name, turns: turns.length, eotWaitMs: last.detectedAtMs - last.endMs, endGapMs: last.endMs - speechEndMs, speechEndSource };
}

function summarise(setting: EndOfTurnSetting, perFixture: FixtureTurns[]): EndOfTurnRow {
  const waits = perFixture.flatMap((result) => (result.eotWaitMs === undefined ? [] : [result.eotWaitMs]));
  const gaps = perFixture.flatMap((result) => (result.endGapMs === undefined ? [] : [result.endGapMs]));
  return {
    setting,
    fixtures: perFixture.length,
    turns: perFixture.reduce((sum, result) => sum + result.turns, 0),
    falseCutOffs: perFixture.reduce((sum, result) => sum + Math.max(0, result.turns - 1), 0),
    missed: perFixture.filter((result) => result.turns === 0).length,
    eotWaitMsMean: mean(waits),
    eotWaitMsMax: waits.length > 0 ? Math.max(...waits) : null,
    endGapMsMean: mean(gaps),
    endGapMsMaxAbs: gaps.length > 0 ? Math.max(...gaps.map(Math.abs)) : null,
    heardWaitMsMean: mean(perFixture.flatMap((result) => (result.eotWaitMs === undefined || result.endGapMs === undefined ? [] : [result.eotWaitMs + result.endGapMs]))),
    perFixture,
  };
}

function mean(values: readonly number[]): number | null {
  return values.length > 0 ? values.reduce((sum, value) => sum + value, 0) / values.length : null;
}

/** A plain-text table, one line per setting. */
export function formatEndOfTurnTable(rows: readonly EndOfTurnRow[]): string {
  const header = ['setting', 'fixtures', 'turns', 'false cut-offs', 'missed', 'EOT wait mean ms', 'EOT wait max ms', 'end gap mean ms', 'end gap max |ms|', 'heard wait mean ms'];
  const ms = (value: number | null): string => (value === null ? '-' : value.toFixed(0));
  const body = rows.map((row) => [
    row.setting.label,
    String(row.fixtures),
    String(row.turns),
    String(row.falseCutOffs),
    String(row.missed),
    ms(row.eotWaitMsMean),
    ms(row.eotWaitMsMax),
    ms(row.endGapMsMean),
    ms(row.endGapMsMaxAbs),
    ms(row.heardWaitMsMean),
  ]);
  const widths = header.map((title, column) => Math.max(title.length, ...body.map((cells) => cells[column]!.length)));
  const line = (cells: readonly string[]): string => cells.map((cell, column) => (column === 0 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!))).join('  ');
  return [line(header), widths.map((width) => '-'.repeat(width)).join('  '), ...body.map(line)].join('\n');
}

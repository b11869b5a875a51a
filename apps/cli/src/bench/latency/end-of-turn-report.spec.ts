/**
 * The end-of-turn report on the real Silero VAD and TurnDetector: the invariants its figures must
 * keep on the repository's fixtures, and that its counting sees a false cut-off where there is one.
 */
import { createInferenceRuntime, type OnnxInferenceRuntime, SileroVad } from '@switchboard/inference';
import { concatSpeech as concat, loadSpeech8k, silence, silentLogger, SPEECH_FIXTURES, speechBoundsMs } from '@switchboard/testing';
import { END_OF_TURN_SETTINGS, formatEndOfTurnTable, measureEndOfTurn, runEndOfTurnReport, type EndOfTurnRow } from './end-of-turn-report';

jest.setTimeout(120_000);

/** One VAD chunk: turn offsets are on its grid. */
const CHUNK_MS = 32;

describe('end-of-turn report (real Silero VAD + TurnDetector)', () => {
  describe('on the repository fixtures, as the runner prints it', () => {
    let rows: EndOfTurnRow[];
    beforeAll(async () => {
      rows = await runEndOfTurnReport();
    });

    it('has one row per setting (minSilenceMs 300, 500, 800), each over every fixture', () => {
      expect(rows.map((row) => row.setting.minSilenceMs)).toEqual([300, 500, 800]);
      for (const row of rows) {
        expect(row.fixtures).toBe(SPEECH_FIXTURES.length);
        expect(row.perFixture.map((result) => result.fixture)).toEqual([...SPEECH_FIXTURES]);
      }
    });

    it('finds at least one turn in every fixture, and counts every extra turn as a false cut-off', () => {
      for (const row of rows) {
        for (const result of row.perFixture) expect(result.turns).toBeGreaterThanOrEqual(1);
        expect(row.missed).toBe(0);
        expect(row.turns).toBe(row.fixtures + row.falseCutOffs);
      }
    });

    it('waits between minSilenceMs - 32 and minSilenceMs + 100 after the end of the last turn', () => {
      for (const row of rows) {
        const { minSilenceMs } = row.setting;
        for (const result of row.perFixture) {
          expect(result.eotWaitMs).toBeGreaterThanOrEqual(minSilenceMs - CHUNK_MS);
          expect(result.eotWaitMs).toBeLessThan(minSilenceMs + 100);
        }
        expect(row.eotWaitMsMean).toBeGreaterThanOrEqual(minSilenceMs - CHUNK_MS);
        expect(row.eotWaitMsMax).toBeLessThan(minSilenceMs + 100);
        expect(row.eotWaitMsMax).toBeGreaterThanOrEqual(row.eotWaitMsMean!);
      }
    });

    it('puts the turn end near the speech end measured from the fixture (the VAD spec allows 100 ms; a chunk more for the hysteresis)', () => {
      for (const row of rows) {
        for (const result of row.perFixture) {
          expect(result.speechEndSource).toBe('fixture');
          expect(Math.abs(result.endGapMs!)).toBeLessThanOrEqual(100 + CHUNK_MS);
        }
        expect(row.heardWaitMsMean).toBeCloseTo(row.eotWaitMsMean! + row.endGapMsMean!, 6);
      }
    });

    it('prints a table with a header and one line per setting', () => {
      const table = formatEndOfTurnTable(rows).split('\n');
      expect(table).toHaveLength(2 + rows.length);
      expect(table[0]).toMatch(/^setting\s+fixtures\s+turns\s+false cut-offs\s+missed\s+EOT wait mean ms\s+EOT wait max ms/);
      for (const [index, row] of rows.entries()) {
        expect(table[2 + index]).toMatch(new RegExp(`^minSilenceMs=${row.setting.minSilenceMs}\\s+${SPEECH_FIXTURES.length}\\s+${row.turns}\\s+${row.falseCutOffs}\\s+0\\s+${row.eotWaitMsMean!.toFixed(0)}\\s`));
      }
    });
  });

  describe('on made-up fixtures', () => {
    let runtime: OnnxInferenceRuntime;
    let vad: SileroVad;
    beforeAll(async () => {
      runtime = await createInferenceRuntime({ device: 'cpu', workers: 1, logger: silentLogger });
      vad = await SileroVad.load(runtime);
    });
    afterAll(() => runtime.close());

    it('counts a 700 ms pause inside one utterance as a false cut-off at 300 and 500 ms, not at 800 ms; silence as missed', async () => {
      const goodbye = loadSpeech8k('goodbye');
      const hours = loadSpeech8k('hours');
      const paused = concat(goodbye.subarray(0, speechBoundsMs(goodbye).endMs * 8), silence(700), hours.subarray(speechBoundsMs(hours).startMs * 8));
      const rows = await measureEndOfTurn(vad, [
        { name: 'paused', pcm8k: paused },
        { name: 'silence', pcm8k: silence(2000) },
      ]);
      expect(rows.map((row) => [row.setting.minSilenceMs, row.turns, row.falseCutOffs, row.missed])).toEqual([
        [300, 2, 1, 1],
        [500, 2, 1, 1],
        [800, 1, 0, 1],
      ]);
      // No known speech end: the last turn's end stands in, so the gap is 0 by definition.
      expect(rows[0]!.perFixture[0]).toMatchObject({ speechEndSource: 'last-turn', endGapMs: 0 });
      expect(rows[0]!.perFixture[1]).toEqual({ fixture: 'silence', turns: 0, speechEndSource: 'last-turn' });
      expect(formatEndOfTurnTable(rows)).toContain('minSilenceMs=800');
    });

    it('shows "-" for the figures of a setting where no fixture produced a turn, and refuses an empty fixture list', async () => {
      const rows = await measureEndOfTurn(vad, [{ name: 'silence', pcm8k: silence(1000) }], [END_OF_TURN_SETTINGS[0]!]);
      expect(rows[0]).toMatchObject({ turns: 0, missed: 1, eotWaitMsMean: null, eotWaitMsMax: null });
      expect(formatEndOfTurnTable(rows).split('\n')[2]).toMatch(/^minSilenceMs=300\s+1\s+0\s+0\s+1(\s+-){5}$/);
      await expect(measureEndOfTurn(vad, [])).rejects.toThrow(/at least one fixture/);
    });
  });
});

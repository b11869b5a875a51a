/**
 * Prints the end-of-turn report (VAD alone, minSilenceMs 300/500/800, the speech fixtures):
 * `npx ts-node --transpile-only -r tsconfig-paths/register apps/cli/src/bench/latency/end-of-turn-report.main.ts`
 */
import { formatEndOfTurnTable, runEndOfTurnReport, TRAILING_SILENCE_MS } from './end-of-turn-report';

async function main(): Promise<void> {
  const rows = await runEndOfTurnReport();
  console.log(`End-of-turn wait vs false cut-offs: real Silero VAD v5 + TurnDetector (defaults otherwise), each fixture one utterance + ${TRAILING_SILENCE_MS} ms of silence, 20 ms frames.`);
  console.log('EOT wait: detectedAtMs - endMs of the last turn. End gap: that turn\'s endMs - the speech end measured from the fixture\'s energy.\n');
  console.log(formatEndOfTurnTable(rows));
  console.log('\nPer fixture (turns / EOT wait ms / end gap ms):');
  for (const row of rows) {
    const cells = row.perFixture.map((result) => `${result.fixture} ${result.turns}/${result.eotWaitMs ?? '-'}/${result.endGapMs ?? '-'}`);
    console.log(`  ${row.setting.label}: ${cells.join(', ')}`);
  }
}

main().catch((error: unknown) => {
  console.error(`end-of-turn report failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
});

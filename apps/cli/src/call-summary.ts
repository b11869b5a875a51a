import type { CallResult } from '@switchboard/simulated-caller';

/** Formats the latency summary as a two-column table for the terminal. */
export function formatCallSummary(result: CallResult): string {
  const latency = result.latency;
  const ms = (value: number | null): string => (value === null ? 'n/a' : `${value.toFixed(1)} ms`);
  const rows: [string, string][] = [
    ['first echo (first frame sent -> first frame back)', ms(latency.firstEchoMs)],
    ['reply after speech (last speech frame -> reply)', ms(latency.replyAfterSpeechMs)],
    ...latency.turns.map((turn, index): [string, string] => [
      `  turn ${index + 1} (speech ended at ${(turn.speechEndedAtMs / 1000).toFixed(2)} s)`,
      ms(turn.replyLatencyMs),
    ]),
    ['frames sent / received', `${latency.framesSent} / ${latency.framesReceived}`],
    ['bytes sent / received', `${latency.bytesSent} / ${latency.bytesReceived}`],
    ['audio played / cleared', `${seconds(latency.bytesPlayed)} / ${seconds(latency.bytesCleared)}`],
    ['marks received / echoed played / echoed cleared', `${latency.marksReceived} / ${latency.marksEchoed} / ${latency.marksCleared}`],
    ['clears', String(latency.clears)],
    ['dtmf sent', String(latency.dtmfSent)],
    ['protocol errors', String(latency.protocolErrors)],
    ['worst send lateness (this process)', ms(latency.maxSendLateMs)],
    ['stream duration', `${(latency.durationMs / 1000).toFixed(2)} s`],
    ['closed by', result.closedBy === null ? 'n/a' : `${result.closedBy} (code ${result.closeCode ?? '?'})`],
  ];
  const width = Math.max(...rows.map(([label]) => label.length));
  return rows.map(([label, value]) => `  ${label.padEnd(width)}  ${value}`).join('\n');
}

/** mu-law bytes at 8 kHz as seconds. */
function seconds(bytes: number): string {
  return `${(bytes / 8000).toFixed(2)} s`;
}

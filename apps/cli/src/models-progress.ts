import { Presets, SingleBar } from 'cli-progress';
import type { ChecksumSource, PullEvent } from '@switchboard/inference';

export interface ProgressOutput {
  /** One finished line (logs, non-TTY output). */
  line(text: string): void;
  /** Where the live bar is drawn; only used when it is a TTY. */
  stream?: NodeJS.WritableStream & { isTTY?: boolean };
}

export function formatBytes(bytes: number): string {
  if (bytes < 1000) return `${bytes} B`;
  if (bytes < 1_000_000) return `${(bytes / 1000).toFixed(1)} kB`;
  return `${(bytes / 1_000_000).toFixed(1)} MB`;
}

const CHECKSUM_TEXT: Record<ChecksumSource, string> = {
  catalog: "matches the catalog's sha256",
  hub: "matches the Hub's published sha256",
  'trust-on-first-use': 'no published sha256: recorded on first use',
};

// In logs (not a TTY), a line per quarter for big files shows progress without flooding CI output.
const QUARTER_LINES_FROM_BYTES = 10_000_000;

/**
 * Renders pull events: a live cli-progress bar per file on a terminal, plain lines otherwise
 * (cli-progress draws nothing on a non-TTY stream, and carriage returns would garble log files).
 */
export function createPullProgress(output: ProgressOutput): { onEvent(event: PullEvent): void; stop(): void } {
  const tty = output.stream?.isTTY === true ? output.stream : undefined;
  let bar: SingleBar | undefined;
  let quartersShown = 0;

  const stopBar = (): void => {
    bar?.stop();
    bar = undefined;
  };

  const onEvent = (event: PullEvent): void => {
    switch (event.type) {
      case 'model-start':
        output.line(`Pulling ${event.name} from ${event.repo}@${event.revision} (${event.fileCount} ${event.fileCount === 1 ? 'file' : 'files'})`);
        return;
      case 'file-start': {
        stopBar();
        quartersShown = 0;
        const size = event.totalBytes === null ? 'size unknown' : formatBytes(event.totalBytes);
        const resumed = event.resumedFromBytes > 0 ? `, resuming at ${formatBytes(event.resumedFromBytes)}` : '';
        if (tty && event.totalBytes !== null && event.totalBytes > 0) {
          bar = new SingleBar(
            { stream: tty, format: `  ${event.path} [{bar}] {percentage}% {done}/{size}`, hideCursor: true, barsize: 28 },
            Presets.shades_classic,
          );
          bar.start(event.totalBytes, event.resumedFromBytes, { done: formatBytes(event.resumedFromBytes), size });
        } else {
          output.line(`  ${event.path}: downloading (${size}${resumed})`);
        }
        return;
      }
      case 'file-progress':
        if (bar) {
          bar.update(event.receivedBytes, { done: formatBytes(event.receivedBytes) });
        } else if (event.totalBytes !== null && event.totalBytes >= QUARTER_LINES_FROM_BYTES) {
          const quarter = Math.floor((event.receivedBytes / event.totalBytes) * 4);
          if (quarter > quartersShown && quarter < 4) {
            quartersShown = quarter;
            output.line(`  ${event.path}: ${quarter * 25}% (${formatBytes(event.receivedBytes)} of ${formatBytes(event.totalBytes)})`);
          }
        }
        return;
      case 'file-done':
      case 'file-kept': {
        stopBar();
        const how = event.type === 'file-kept' ? 'kept from the earlier pull' : 'done';
        output.line(`  ${event.path}: ${how}, ${formatBytes(event.sizeBytes)}, sha256 ${event.sha256.slice(0, 12)}… ${CHECKSUM_TEXT[event.checksumSource]}`);
        return;
      }
      case 'retry':
        stopBar();
        output.line(`  ${event.path}: ${event.reason}; retry ${event.attempt} in ${(event.delayMs / 1000).toFixed(1)} s (resuming)`);
        return;
      case 'notice':
        stopBar();
        output.line(`  note: ${event.message}`);
        return;
    }
  };
  return { onEvent, stop: stopBar };
}

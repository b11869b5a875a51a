import { writeFile } from 'node:fs/promises';
import { writeWav } from '@switchboard/audio';
import { placeCall, PlacedCallResult, SimulatedTwilioCall, TwilioCallerError } from '@switchboard/simulated-caller';
import { CallAudioInputError, CallerAudio, LINE_SAMPLE_RATE, loadCallerAudio } from './call-audio-input';
import { CALL_USAGE, CallCommandOptions, CallUsageError, parseCallCommand } from './call-options';
import { formatCallSummary } from './call-summary';

/**
 * `npm run call -- --to +15550001111 --wav caller.wav`: places one simulated Twilio call against
 * the local server, saves what the agent said and prints a latency summary.
 * Exit codes: 0 call completed cleanly, 1 call failed (unreachable, refused, rejected, protocol
 * errors, output not writable), 2 bad command line or unreadable input audio.
 */

export interface CommandOutput {
  out(line: string): void;
  err(line: string): void;
}

const consoleOutput: CommandOutput = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
};

export async function runCallCommand(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  io: CommandOutput = consoleOutput,
): Promise<number> {
  let options: CallCommandOptions;
  let audio: CallerAudio;
  try {
    const parsed = parseCallCommand(argv, env);
    if (parsed.kind === 'help') {
      io.out(CALL_USAGE);
      return 0;
    }
    options = parsed.options;
    audio = await loadCallerAudio(options.audioPath);
  } catch (error) {
    if (!(error instanceof CallUsageError) && !(error instanceof CallAudioInputError)) throw error;
    io.err(`error: ${error.message}`);
    if (error instanceof CallUsageError) io.err(`\n${CALL_USAGE}`);
    return 2;
  }

  io.out(`Calling ${options.to} from ${options.from} at ${options.serverUrl} (signed for ${options.publicBaseUrl})`);
  io.out(`Caller audio: ${options.audioPath}, ${audio.description}, ${(audio.durationMs / 1000).toFixed(2)} s`);
  if (options.accountSid === undefined) io.out('note: TWILIO_ACCOUNT_SID is not set; using a made-up account SID');

  let result: PlacedCallResult;
  const stopOnInterrupt = hangUpOnInterrupt();
  try {
    result = await placeCall({
      serverUrl: options.serverUrl,
      publicBaseUrl: options.publicBaseUrl,
      authToken: options.authToken,
      ...(options.accountSid ? { accountSid: options.accountSid } : {}),
      from: options.from,
      to: options.to,
      audio: audio.mulaw,
      ...(options.afterAudio.kind === 'await-reply'
        ? { awaitReply: { tailMs: options.afterAudio.tailMs, timeoutMs: options.afterAudio.timeoutMs } }
        : { trailingSilenceMs: options.afterAudio.ms }),
      dtmf: options.dtmf,
      statusCallbacks: options.statusCallbacks,
      onConnected: stopOnInterrupt.watch,
    });
  } catch (error) {
    if (!(error instanceof TwilioCallerError)) throw error;
    io.err(`error: ${describeCallFailure(error, options)}`);
    return 1;
  } finally {
    stopOnInterrupt.dispose();
  }

  if (result.rejected) {
    io.err(`error: the server rejected call ${result.callSid}${result.sayText ? `, saying: "${result.sayText}"` : ''}`);
    return 1;
  }
  try {
    await writeFile(options.outPath, writeWav({ samples: result.played, sampleRate: LINE_SAMPLE_RATE }));
    if (options.receivedOutPath) {
      await writeFile(options.receivedOutPath, writeWav({ samples: result.received, sampleRate: LINE_SAMPLE_RATE }));
    }
  } catch (error) {
    io.err(`error: cannot write the agent audio: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }

  io.out(`Call ${result.callSid} (stream ${result.streamSid}) ended`);
  const waited = describeReplyWait(result, options);
  if (waited) io.out(waited);
  io.out(`Agent audio (what the caller heard): ${options.outPath}, ${(result.played.length / LINE_SAMPLE_RATE).toFixed(2)} s`);
  if (options.receivedOutPath) io.out(`Everything received: ${options.receivedOutPath}`);
  io.out('Latency summary:');
  io.out(formatCallSummary(result));
  if (options.json) {
    io.out(JSON.stringify({ callSid: result.callSid, streamSid: result.streamSid, closedBy: result.closedBy, replyWait: result.replyWait, ...result.latency }));
  }
  if (result.protocolErrors.length > 0) {
    io.err(`error: the server sent ${result.protocolErrors.length} message(s) Twilio would not accept:`);
    for (const problem of result.protocolErrors.slice(0, 20)) io.err(`  - ${problem}`);
    return 1;
  }
  return 0;
}

function describeCallFailure(error: TwilioCallerError, options: CallCommandOptions): string {
  switch (error.code) {
    case 'SERVER_UNREACHABLE':
      return `cannot reach the server at ${options.serverUrl} (${error.message}). Is it running? Start it, or pass --server.${portHint(options)}`;
    case 'WEBHOOK_HTTP_ERROR':
    case 'MEDIA_UPGRADE_REJECTED':
      return error.httpStatus === 401 || error.httpStatus === 403
        ? `${error.message}. The server refused the signature: TWILIO_AUTH_TOKEN and PUBLIC_BASE_URL (${options.publicBaseUrl}) must match the server's.`
        : error.message;
    default:
      return error.message;
  }
}

/** A server started with another PORT is the usual reason: PORT set in its shell is not seen in this one. */
function portHint(options: CallCommandOptions): string {
  if (options.serverUrlFrom === 'flag') return '';
  const port = new URL(options.serverUrl).port;
  const from = options.serverUrlFrom === 'PORT' ? `PORT=${port} in this shell` : `PORT is not set in this shell, so the server's default port ${port} was dialled`;
  return ` ${from}: a server started with another PORT needs the same PORT exported here (the server reads its own environment, no .env file).`;
}

/** How the wait for the agent's reply went (nothing to say with --trailing-silence-ms). */
function describeReplyWait(result: PlacedCallResult, options: CallCommandOptions): string | undefined {
  const wait = result.replyWait;
  if (!wait || options.afterAudio.kind !== 'await-reply') return undefined;
  const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
  if (wait.outcome === 'call_closed') return `The server ended the call ${seconds(wait.waitedMs)} after the caller's audio`;
  if (wait.outcome === 'ended') return `Heard the agent's reply to its end, then ${seconds(options.afterAudio.tailMs)} of silence (waited ${seconds(wait.waitedMs)})`;
  return wait.replyHeard
    ? `note: the agent was still talking after ${seconds(options.afterAudio.timeoutMs)} (--reply-timeout-ms); hung up`
    : `note: no reply from the agent within ${seconds(options.afterAudio.timeoutMs)} (--reply-timeout-ms); hung up`;
}

/** Ctrl-C hangs up like a caller would (stop + close) so the WAV and summary still come out. */
function hangUpOnInterrupt(): { watch: (call: SimulatedTwilioCall) => void; dispose: () => void } {
  let current: SimulatedTwilioCall | undefined;
  let interrupted = false;
  const onSignal = (): void => {
    // A second Ctrl-C, or one before the media socket is up, quits at once.
    if (!current || interrupted) process.exit(130);
    interrupted = true;
    void current.hangup();
  };
  process.on('SIGINT', onSignal);
  return {
    watch: (call) => (current = call),
    dispose: () => process.off('SIGINT', onSignal),
  };
}

if (require.main === module) {
  runCallCommand(process.argv.slice(2), process.env).then(
    (exitCode) => (process.exitCode = exitCode),
    (error: unknown) => {
      process.stderr.write(`unexpected error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      process.exitCode = 1;
    },
  );
}

import { parseArgs } from 'node:util';
import { DEFAULT_PORT, defaultPublicBaseUrl, serverPortOf } from '@switchboard/config';
import { DEFAULT_REPLY_TAIL_MS, DEFAULT_REPLY_TIMEOUT_MS, type DtmfPress } from '@switchboard/simulated-caller';

/** Everything `npm run call` needs, resolved from flags first, then the environment. */
export interface CallCommandOptions {
  to: string;
  from: string;
  audioPath: string;
  serverUrl: string;
  /** Where serverUrl came from: --server, this shell's PORT, or the server's default port. */
  serverUrlFrom: 'flag' | 'PORT' | 'default';
  publicBaseUrl: string;
  authToken: string;
  /** undefined: a fresh AC sid is made up (fine unless the server pins TWILIO_ACCOUNT_SID). */
  accountSid: string | undefined;
  outPath: string;
  receivedOutPath: string | undefined;
  /** After the caller's audio: wait for the agent's reply to end (the default), or send a fixed silence. */
  afterAudio: { kind: 'await-reply'; tailMs: number; timeoutMs: number } | { kind: 'trailing-silence'; ms: number };
  dtmf: DtmfPress[];
  statusCallbacks: boolean;
  json: boolean;
}

export type ParsedCallCommand = { kind: 'run'; options: CallCommandOptions } | { kind: 'help' };

/** Bad command line: the message is printed with the usage text and the process exits 2. */
export class CallUsageError extends Error {
  override readonly name = 'CallUsageError';
  readonly retryable = false;
}

/** Gap between the keys of one `--dtmf 12#@3000` group, like a person pressing keys in turn. */
export const DTMF_KEY_SPACING_MS = 200;

export const CALL_USAGE = `Usage: npm run call -- --to <E.164> --wav <file.wav|file.ulaw> [options]

Dials the local server exactly like Twilio: signed voice webhook, then the media socket with
real-time 20 ms frames. Saves what the agent said (what the caller heard) as a WAV.

  --to <number>               number being called (the agent's), E.164, required
  --wav <file>                caller audio: WAV at any rate (resampled to 8 kHz) or headerless
                              8 kHz mu-law (.ulaw/.mulaw/.ul), required
  --from <number>             caller id (default +15555550100)
  --server <url>              where the server listens (default http://127.0.0.1:$PORT, PORT read
                              from this shell as the server reads its own; unset: ${DEFAULT_PORT})
  --public-base-url <url>     PUBLIC_BASE_URL the server signs against (default: env, else the server's own default, http://localhost:<port of --server>)
  --auth-token <token>        default: env TWILIO_AUTH_TOKEN (prefer the env: flags show in ps)
  --account-sid <sid>         default: env TWILIO_ACCOUNT_SID, else a made-up AC sid
  --out <file>                agent audio WAV (default agent.wav)
  --received-out <file>       also save every audio payload received, cleared audio included
  --reply-tail-ms <ms>        after the audio, the line stays open (sending silence) until the
                              agent's reply has played to its end and this much silence followed
                              (default ${DEFAULT_REPLY_TAIL_MS})
  --reply-timeout-ms <ms>     the longest that wait lasts, reply or not (default ${DEFAULT_REPLY_TIMEOUT_MS})
  --trailing-silence-ms <ms>  instead of waiting for the reply: hang up after exactly this much
                              silence
  --dtmf <keys@ms>            press keys at a time from the start, e.g. 12#@3000 (repeatable)
  --no-status-callbacks       do not POST the signed status callbacks (in-progress at answer,
                              completed at the end) that Twilio sends a number whose status
                              callback is set to /twilio/status, as the README sets it; without
                              them the call stays "ringing" (--status-callbacks: the default)
  --json                      print the result summary as one JSON line too
  --help                      this text`;

const E164 = /^\+[1-9]\d{6,14}$/;

export function parseCallCommand(argv: readonly string[], env: NodeJS.ProcessEnv): ParsedCallCommand {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: false,
      options: {
        to: { type: 'string' },
        from: { type: 'string' },
        wav: { type: 'string' },
        server: { type: 'string' },
        'public-base-url': { type: 'string' },
        'auth-token': { type: 'string' },
        'account-sid': { type: 'string' },
        out: { type: 'string' },
        'received-out': { type: 'string' },
        'trailing-silence-ms': { type: 'string' },
        'reply-tail-ms': { type: 'string' },
        'reply-timeout-ms': { type: 'string' },
        dtmf: { type: 'string', multiple: true },
        'status-callbacks': { type: 'boolean' },
        'no-status-callbacks': { type: 'boolean' },
        json: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (error) {
    throw new CallUsageError(error instanceof Error ? error.message : String(error));
  }
  if (values.help) return { kind: 'help' };
  if (values['status-callbacks'] && values['no-status-callbacks']) throw new CallUsageError('--status-callbacks and --no-status-callbacks contradict each other');

  const to = required(values.to, '--to');
  const from = values.from ?? '+15555550100';
  for (const [flag, number] of [['--to', to], ['--from', from]] as const) {
    if (!E164.test(number)) throw new CallUsageError(`${flag} must be an E.164 number such as +15550001111, got "${number}"`);
  }
  const serverUrlFrom = values.server !== undefined ? 'flag' : env['PORT'] ? 'PORT' : 'default';
  const serverUrl = httpUrl(values.server ?? `http://127.0.0.1:${localServerPort(env)}`, '--server');
  const publicBaseUrl = httpUrl(values['public-base-url'] ?? (env['PUBLIC_BASE_URL'] || serverDefaultPublicBaseUrl(serverUrl)), '--public-base-url / PUBLIC_BASE_URL');
  const authToken = values['auth-token'] ?? env['TWILIO_AUTH_TOKEN'];
  if (!authToken) throw new CallUsageError('No auth token: set TWILIO_AUTH_TOKEN (the one the server uses) or pass --auth-token');
  const accountSid = values['account-sid'] ?? (env['TWILIO_ACCOUNT_SID'] || undefined);
  if (accountSid !== undefined && !/^AC[0-9a-f]{32}$/i.test(accountSid)) {
    throw new CallUsageError('The account SID must be AC followed by 32 hex characters');
  }

  return {
    kind: 'run',
    options: {
      to,
      from,
      audioPath: required(values.wav, '--wav'),
      serverUrl,
      serverUrlFrom,
      publicBaseUrl,
      authToken,
      accountSid,
      outPath: values.out ?? 'agent.wav',
      receivedOutPath: values['received-out'],
      afterAudio: afterAudioOf(values),
      dtmf: (values.dtmf ?? []).flatMap(parseDtmfSpec),
      statusCallbacks: !values['no-status-callbacks'],
      json: values.json ?? false,
    },
  };
}

/** What the caller does once its audio is sent: wait for the reply (default), or a fixed silence. */
function afterAudioOf(values: { 'trailing-silence-ms'?: string; 'reply-tail-ms'?: string; 'reply-timeout-ms'?: string }): CallCommandOptions['afterAudio'] {
  const fixed = values['trailing-silence-ms'];
  if (fixed !== undefined) {
    if (values['reply-tail-ms'] !== undefined || values['reply-timeout-ms'] !== undefined) {
      throw new CallUsageError('--trailing-silence-ms replaces the wait for the reply: it cannot go with --reply-tail-ms or --reply-timeout-ms');
    }
    return { kind: 'trailing-silence', ms: nonNegativeInteger(fixed, '--trailing-silence-ms') };
  }
  const tailMs = nonNegativeInteger(values['reply-tail-ms'] ?? String(DEFAULT_REPLY_TAIL_MS), '--reply-tail-ms');
  const timeoutMs = nonNegativeInteger(values['reply-timeout-ms'] ?? String(DEFAULT_REPLY_TIMEOUT_MS), '--reply-timeout-ms');
  if (timeoutMs === 0) throw new CallUsageError('--reply-timeout-ms must be more than 0 (use --trailing-silence-ms 0 to hang up at once)');
  return { kind: 'await-reply', tailMs, timeoutMs };
}

/**
 * The port a server started in a shell with this environment listens on, read as the server reads
 * PORT (libs/config; the server reads no .env file, so neither does this).
 */
function localServerPort(env: NodeJS.ProcessEnv): number {
  const port = serverPortOf(env);
  if (port === undefined) throw new CallUsageError(`PORT must be a port number from 1 to 65535, got "${env['PORT']}"`);
  if (port === 0) throw new CallUsageError('PORT=0 makes the server listen on a free port of its choosing: pass --server with the port it listens on');
  return port;
}

/** `12#@3000` -> 1 at 3000 ms, 2 at 3200 ms, # at 3400 ms. */
export function parseDtmfSpec(spec: string): DtmfPress[] {
  const match = /^([0-9*#A-D]+)@(\d+)$/.exec(spec);
  if (!match) throw new CallUsageError(`--dtmf must look like 12#@3000 (keys 0-9 * # A-D, then @ms), got "${spec}"`);
  const [, keys = '', atMs = '0'] = match;
  return [...keys].map((digit, index) => ({ digit, atMs: Number(atMs) + index * DTMF_KEY_SPACING_MS }));
}

function required(value: string | undefined, flag: string): string {
  if (value === undefined || value === '') throw new CallUsageError(`${flag} is required`);
  return value;
}

function httpUrl(value: string, what: string): string {
  if (!/^https?:\/\/[^/\s]+/i.test(value) || !URL.canParse(value)) {
    throw new CallUsageError(`${what} must be an absolute http(s) URL, got "${value}"`);
  }
  return value.replace(/\/+$/, '');
}

function nonNegativeInteger(value: string, flag: string): number {
  if (!/^\d+$/.test(value)) throw new CallUsageError(`${flag} must be a whole number of milliseconds, got "${value}"`);
  return Number(value);
}

/**
 * What a server without PUBLIC_BASE_URL signs against (libs/config's default, at the port the
 * caller dials). Twilio signs the URL it was given, not the address it dials, so the simulated
 * caller must sign for the same one.
 */
function serverDefaultPublicBaseUrl(serverUrl: string): string {
  const url = new URL(serverUrl);
  return defaultPublicBaseUrl(url.port || (url.protocol === 'https:' ? '443' : '80'));
}

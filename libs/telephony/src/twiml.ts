import VoiceResponse from 'twilio/lib/twiml/VoiceResponse';
import { TelephonyError } from './telephony-error';

/** Twilio refuses a <Parameter> whose name plus value reach this many characters. */
export const MAX_STREAM_PARAMETER_CHARS = 500;

export interface ConnectStreamTwimlOptions {
  /**
   * wss:// URL with no query string (Twilio drops query strings on stream URLs). ws:// is accepted
   * only for loopback hosts: local development and the simulated caller, which Twilio never reaches.
   */
  streamUrl: string;
  /** Sent back in the stream's start message as customParameters. */
  parameters: Record<string, string>;
  /** Absolute http(s) URL for the stream's status events. */
  statusCallbackUrl?: string;
}

function assertStreamUrl(streamUrl: string): void {
  let parsed: URL;
  try {
    parsed = new URL(streamUrl);
  } catch {
    throw new TelephonyError('invalid_stream_url', `stream URL is not an absolute URL: "${streamUrl}"`);
  }
  const loopbackDevelopment = parsed.protocol === 'ws:' && isLoopbackHost(parsed.hostname);
  if (parsed.protocol !== 'wss:' && !loopbackDevelopment) {
    throw new TelephonyError('stream_url_not_wss', `stream URL must use wss:// (ws:// only on loopback), got "${parsed.protocol}//"`);
  }
  if (streamUrl.includes('?') || streamUrl.includes('#')) {
    throw new TelephonyError('stream_url_has_query', 'stream URL must not have a query string or fragment; use parameters');
  }
}

function isLoopbackHost(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127(\.\d{1,3}){3}$/.test(hostname);
}

function assertStatusCallbackUrl(url: string): void {
  let protocol: string;
  try {
    protocol = new URL(url).protocol;
  } catch {
    throw new TelephonyError('invalid_status_callback_url', `status callback URL is not an absolute URL: "${url}"`);
  }
  if (protocol !== 'https:' && protocol !== 'http:') {
    throw new TelephonyError('invalid_status_callback_url', `status callback URL must be http(s), got "${protocol}"`);
  }
}

function assertParameter(name: string, value: string): void {
  if (typeof name !== 'string' || name.trim().length === 0) {
    throw new TelephonyError('invalid_parameter_name', 'stream parameter names must be non-empty strings');
  }
  if (typeof value !== 'string') {
    throw new TelephonyError('invalid_parameter_name', `stream parameter "${name}" must have a string value`);
  }
  const chars = name.length + value.length;
  if (chars >= MAX_STREAM_PARAMETER_CHARS) {
    // The value may be a token: name the parameter, never print the value.
    throw new TelephonyError(
      'parameter_too_long',
      `stream parameter "${name}" is ${chars} chars (name + value); Twilio needs fewer than ${MAX_STREAM_PARAMETER_CHARS}`,
    );
  }
}

/** `<Response><Connect><Stream url=...><Parameter .../></Stream></Connect></Response>`; escaping by twilio. */
export function connectStreamTwiml(options: ConnectStreamTwimlOptions): string {
  assertStreamUrl(options.streamUrl);
  if (options.statusCallbackUrl !== undefined) assertStatusCallbackUrl(options.statusCallbackUrl);
  const parameters = Object.entries(options.parameters);
  for (const [name, value] of parameters) assertParameter(name, value);

  const response = new VoiceResponse();
  const stream = response.connect().stream({
    url: options.streamUrl,
    ...(options.statusCallbackUrl !== undefined && {
      statusCallback: options.statusCallbackUrl,
      statusCallbackMethod: 'POST' as const,
    }),
  });
  for (const [name, value] of parameters) stream.parameter({ name, value });
  return response.toString();
}

/** A polite refusal: say `message` (skipped when blank), then hang up. */
export function rejectCallTwiml(message: string): string {
  const response = new VoiceResponse();
  if (typeof message === 'string' && message.trim().length > 0) response.say(message);
  response.hangup();
  return response.toString();
}

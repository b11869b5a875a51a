import { TelephonyError } from './telephony-error';

/** Where Twilio opens the media WebSocket; the server's gateway listens on the same path. */
export const MEDIA_STREAM_PATH = '/twilio/media';

/**
 * PUBLIC_BASE_URL checked and without trailing slashes. Kept as the operator wrote it (no URL
 * normalisation): Twilio signs the URL exactly as configured, so rewriting case or ports here would
 * break signature checks.
 */
function normalizedBase(publicBaseUrl: string): string {
  let parsed: URL;
  try {
    parsed = new URL(publicBaseUrl);
  } catch {
    throw new TelephonyError('invalid_public_base_url', `public base URL is not an absolute URL: "${publicBaseUrl}"`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new TelephonyError('invalid_public_base_url', `public base URL must be http(s), got "${parsed.protocol}"`);
  }
  if (publicBaseUrl.includes('?') || publicBaseUrl.includes('#')) {
    throw new TelephonyError('invalid_public_base_url', 'public base URL must not have a query string or fragment');
  }
  return publicBaseUrl.trim().replace(/\/+$/, '');
}

/** The media-stream URL for TwiML and for checking the upgrade signature: http -> ws, https -> wss. */
export function mediaStreamUrl(publicBaseUrl: string): string {
  const base = normalizedBase(publicBaseUrl);
  const scheme = /^https:/i.test(base) ? 'wss:' : 'ws:';
  return `${scheme}${base.slice(base.indexOf(':') + 1)}${MEDIA_STREAM_PATH}`;
}

/** The URL Twilio calls (and signs) for a webhook at `path`, e.g. '/twilio/voice'. */
export function webhookUrl(publicBaseUrl: string, path: string): string {
  return `${normalizedBase(publicBaseUrl)}/${path.replace(/^\/+/, '')}`;
}

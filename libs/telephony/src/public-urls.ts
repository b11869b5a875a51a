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

const ACCOUNT_SID = /^AC[0-9a-fA-F]{32}$/;

/**
 * The media-stream URL for TwiML and for checking the upgrade signature: http -> ws, https -> wss.
 * A call of an organization's own Twilio account streams to `/twilio/media/<AccountSid>`: the upgrade
 * request carries no AccountSid, and the path is how the server knows whose token verifies it.
 */
export function mediaStreamUrl(publicBaseUrl: string, accountSid?: string): string {
  const base = normalizedBase(publicBaseUrl);
  const scheme = /^https:/i.test(base) ? 'wss:' : 'ws:';
  if (accountSid !== undefined && !ACCOUNT_SID.test(accountSid)) throw new TelephonyError('invalid_account_sid', 'not a Twilio account SID');
  return `${scheme}${base.slice(base.indexOf(':') + 1)}${MEDIA_STREAM_PATH}${accountSid === undefined ? '' : `/${accountSid}`}`;
}

/**
 * Which account a media upgrade path names: undefined for the operator's path, the SID for an
 * organization's own, null for anything else (not a media path).
 */
export function mediaStreamAccountOf(pathname: string): string | undefined | null {
  if (pathname === MEDIA_STREAM_PATH) return undefined;
  if (!pathname.startsWith(`${MEDIA_STREAM_PATH}/`)) return null;
  const sid = pathname.slice(MEDIA_STREAM_PATH.length + 1);
  return ACCOUNT_SID.test(sid) ? sid : null;
}

/** The URL Twilio calls (and signs) for a webhook at `path`, e.g. '/twilio/voice'. */
export function webhookUrl(publicBaseUrl: string, path: string): string {
  return `${normalizedBase(publicBaseUrl)}/${path.replace(/^\/+/, '')}`;
}

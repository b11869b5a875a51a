import { createHmac } from 'node:crypto';

/**
 * X-Twilio-Signature as Twilio computes it: base64(HMAC-SHA1(authToken, url + name1 + value1 + ...))
 * with the POST parameters sorted by name. Written from the protocol description rather than taken
 * from the twilio package on purpose: the simulated caller is an independent peer, so a bug shared
 * with the server's validation code cannot hide here (the spec cross-checks it against twilio's).
 *
 * `url` is the public URL as configured in Twilio (for the media socket: the Stream url from the
 * TwiML, with no parameters), never the local address the request is actually sent to.
 */
export function computeTwilioSignature(
  authToken: string,
  url: string,
  params: Readonly<Record<string, string>> = {},
): string {
  const hmac = createHmac('sha1', authToken);
  hmac.update(url, 'utf8');
  // Default sort = UTF-16 code unit order, which is what Twilio's own libraries use.
  for (const name of Object.keys(params).sort()) {
    hmac.update(name, 'utf8');
    hmac.update(params[name] ?? '', 'utf8');
  }
  return hmac.digest('base64');
}

/**
 * How a request is signed, so robustness tests can send what an attacker or a misconfigured proxy
 * would: `valid` (default), `omit` (no header), `tampered` (a valid-looking signature of other
 * content), or an explicit header value.
 */
export type SignatureMode = 'valid' | 'omit' | 'tampered' | { header: string };

/** The header value to send for `mode`, or undefined when the header must be left out. */
export function signatureHeaderFor(
  mode: SignatureMode,
  authToken: string,
  url: string,
  params: Readonly<Record<string, string>> = {},
): string | undefined {
  if (mode === 'omit') return undefined;
  if (mode === 'tampered') return computeTwilioSignature(authToken, `${url}#tampered`, params);
  if (mode === 'valid') return computeTwilioSignature(authToken, url, params);
  return mode.header;
}

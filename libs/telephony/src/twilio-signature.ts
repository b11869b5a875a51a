import { validateRequest } from 'twilio/lib/webhooks/webhooks';
import { TelephonyError } from './telephony-error';

/** Form fields as Twilio posted them; repeated fields arrive as arrays and are signed as such. */
export type SignedParams = Readonly<Record<string, string | readonly string[]>>;

/**
 * Checks X-Twilio-Signature: base64(HMAC-SHA1(authToken, url + sorted name+value pairs)), compared
 * in constant time by twilio's validateRequest. The URL must be the public one Twilio was given
 * (PUBLIC_BASE_URL + path), never one rebuilt from request headers, which a client controls.
 */
export class TwilioSignatureVerifier {
  // A private field, so logging or serialising the verifier cannot print the token.
  readonly #authToken: string;

  constructor(authToken: string) {
    if (typeof authToken !== 'string' || authToken.length === 0) {
      throw new TelephonyError('invalid_auth_token', 'a Twilio auth token is required to verify signatures');
    }
    this.#authToken = authToken;
  }

  /** True only for a present signature that matches; never throws. */
  verifyHttp(url: string, signature: string | undefined, params: SignedParams): boolean {
    if (typeof signature !== 'string' || signature.length === 0) return false;
    try {
      return validateRequest(this.#authToken, signature, url, params as Record<string, unknown>);
    } catch {
      // validateRequest re-parses the URL with `new URL`, which throws on garbage: that is a mismatch.
      return false;
    }
  }

  /** The media WebSocket upgrade: Twilio signs the stream URL from the TwiML with no parameters. */
  verifyWebSocket(streamUrl: string, signature: string | undefined): boolean {
    return this.verifyHttp(streamUrl, signature, {});
  }
}

import { CallControlError, type CallControl } from '@switchboard/conversation/call/call-control';
import { RestException, type Twilio } from 'twilio';
import TwilioServiceException from 'twilio/lib/base/TwilioServiceException';
import { transferTwiml } from './transfer-twiml';

const CALL_SID = /^CA[0-9a-f]{32}$/;

/**
 * A CallControlError that is safe to log. Twilio's error answers (RestException, or the RFC 9457
 * TwilioServiceException newer endpoints use) carry only Twilio's answer, so they are kept as the
 * cause; a transport error (axios) carries the request config, Authorization header included, so
 * only its code or message is kept.
 */
function callControlError(action: string, callSid: string, error: unknown): CallControlError {
  if (error instanceof RestException || error instanceof TwilioServiceException) {
    const code = error.code === undefined ? '' : ` (code ${error.code})`;
    // 404 / 20404 is Twilio's answer for a call that is over (or never existed): nothing left to act on.
    const callGone = error.status === 404 || error.code === 20404;
    return new CallControlError(`Twilio refused to ${action} call ${callSid}: HTTP ${error.status}${code}: ${error.message}`, callGone, {
      cause: error,
    });
  }
  const code = (error as { code?: unknown } | undefined)?.code;
  const detail = typeof code === 'string' ? code : (error as Error | undefined)?.message ?? String(error);
  return new CallControlError(`could not reach Twilio to ${action} call ${callSid}: ${detail}`);
}

/** Hang-up and cold transfer of one live call through Twilio's REST API (Calls resource update). */
export class TwilioCallControl implements CallControl {
  constructor(
    private readonly client: Twilio,
    readonly callSid: string,
  ) {
    // The SID becomes part of the request path: only a well-formed one is accepted.
    if (!CALL_SID.test(callSid)) throw new CallControlError('not a Twilio call SID (CA and 32 hex digits)');
  }

  /**
   * `reason` is not sent: Twilio's Calls API has no field for it; the runtime records it. A call that
   * is already over counts as hung up.
   */
  async hangUp(_reason: string): Promise<void> {
    try {
      await this.client.calls(this.callSid).update({ status: 'completed' });
    } catch (error) {
      const failure = callControlError('hang up', this.callSid, error);
      if (!failure.callAlreadyEnded) throw failure;
    }
  }

  /** Replaces the call's TwiML with a <Dial>: Twilio ends the media stream and connects the caller to `to`. */
  async transfer(to: string): Promise<void> {
    let twiml: string;
    try {
      twiml = transferTwiml(to);
    } catch (error) {
      throw new CallControlError(`cannot transfer call ${this.callSid}: ${(error as Error).message}`);
    }
    try {
      await this.client.calls(this.callSid).update({ twiml });
    } catch (error) {
      throw callControlError('transfer', this.callSid, error);
    }
  }
}

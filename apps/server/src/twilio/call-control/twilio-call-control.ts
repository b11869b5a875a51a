import { CallControlError, type CallControl } from '@switchboard/conversation';
import type { Twilio } from 'twilio';
import { sayAndHangUpTwiml, transferTwiml } from './transfer-twiml';
import { isTwilioErrorAnswer, transportErrorDetail } from './twilio-failure';

const CALL_SID = /^CA[0-9a-f]{32}$/;

/**
 * A CallControlError that is safe to log: Twilio's error answers carry only Twilio's answer, so they
 * are kept as the cause; a transport error is reduced to transportErrorDetail.
 */
function callControlError(action: string, callSid: string, error: unknown): CallControlError {
  if (isTwilioErrorAnswer(error)) {
    const code = error.code === undefined ? '' : ` (code ${error.code})`;
    // 404 / 20404 is Twilio's answer for a call that is over (or never existed): nothing left to act on.
    const callGone = error.status === 404 || error.code === 20404;
    return new CallControlError(`Twilio refused to ${action} call ${callSid}: HTTP ${error.status}${code}: ${error.message}`, callGone, {
      cause: error,
    });
  }
  return new CallControlError(`could not reach Twilio to ${action} call ${callSid}: ${transportErrorDetail(error)}`);
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

  /** Replaces the call's TwiML with <Say>message</Say><Hangup/>: Twilio ends the media stream, speaks, and hangs up. */
  async sayAndHangUp(message: string): Promise<void> {
    try {
      await this.client.calls(this.callSid).update({ twiml: sayAndHangUpTwiml(message) });
    } catch (error) {
      throw callControlError('end', this.callSid, error);
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

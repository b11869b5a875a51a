import { Injectable } from '@nestjs/common';
import { CallRepository, isTerminalCallStatus } from '@switchboard/persistence';
import type { StatusCallbackParams } from '@switchboard/telephony';
import type { PinoLogger } from 'nestjs-pino';
import { CallEndService } from '../../call-lifecycle/call-end.service';
import { LiveCalls } from '../../call-runtime/live-calls';
import { assertCallOfAccount } from './twilio-account';

/** What Twilio's callbacks about a call (status, AMD) check and record on the call's row. */
@Injectable()
export class CallCallbacksService {
  constructor(
    private readonly calls: CallRepository,
    private readonly callEnds: CallEndService,
    private readonly liveCalls: LiveCalls,
  ) {}

  /**
   * Records a status callback on the call (order-safe); false for a CallSid this server does not
   * know. The call being over at Twilio, a stream of it still open here ends through its runtime,
   * as its stop would end it.
   */
  async applyStatus(params: StatusCallbackParams): Promise<boolean> {
    const found = await this.callEnds.applyStatusCallback({
      twilioCallSid: params.callSid,
      status: params.status,
      sequenceNumber: params.sequenceNumber,
      callDurationSeconds: params.callDurationSeconds,
      billedMinutes: params.billedMinutes,
      at: params.timestamp ?? new Date(),
    });
    if (found && isTerminalCallStatus(params.status)) this.liveCalls.carryingPhoneCall(params.callSid)?.carrierEnded();
    return found;
  }

  /** Refuses (403) a callback signed by another account than the call's; an unknown CallSid passes. */
  assertCallOfAccount(callSid: string, signedAccountSid: string, logger: PinoLogger): Promise<void> {
    return assertCallOfAccount(this.calls, callSid, signedAccountSid, logger);
  }

  /** Who (or what) answered; null for a CallSid this server does not know. */
  recordAnsweredBy(input: Parameters<CallRepository['recordAnsweredBy']>[0]) {
    return this.calls.recordAnsweredBy(input);
  }
}

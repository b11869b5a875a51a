import { Injectable } from '@nestjs/common';
import { CallRepository } from '@switchboard/persistence';
import type { PinoLogger } from 'nestjs-pino';
import { assertCallOfAccount } from './twilio-account';

/** What Twilio's callbacks about a call (status, AMD) check and record on the call's row. */
@Injectable()
export class CallCallbacksService {
  constructor(private readonly calls: CallRepository) {}

  /** Refuses (403) a callback signed by another account than the call's; an unknown CallSid passes. */
  assertCallOfAccount(callSid: string, signedAccountSid: string, logger: PinoLogger): Promise<void> {
    return assertCallOfAccount(this.calls, callSid, signedAccountSid, logger);
  }

  /** Who (or what) answered; null for a CallSid this server does not know. */
  recordAnsweredBy(input: Parameters<CallRepository['recordAnsweredBy']>[0]) {
    return this.calls.recordAnsweredBy(input);
  }
}

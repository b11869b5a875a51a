import { ForbiddenException } from '@nestjs/common';
import type { CallRepository } from '@switchboard/persistence';
import type { PinoLogger } from 'nestjs-pino';

/** A correctly signed request that speaks for something another account owns: refuse it. */
export function wrongAccount(): ForbiddenException {
  return new ForbiddenException({ statusCode: 403, error: 'Forbidden', code: 'wrong_account', message: 'This request is not signed by the Twilio account this call or number belongs to.' });
}

/**
 * A callback about a call (status, AMD) must come from the account the call was placed or answered
 * with: another account's valid signature proves nothing about this call. `signedAccountSid` is the
 * AccountSid of the signed form, whose token the signature guard verified. An unknown CallSid passes
 * (the handler acknowledges it and changes nothing).
 */
export async function assertCallOfAccount(calls: CallRepository, callSid: string, signedAccountSid: string, logger: PinoLogger): Promise<void> {
  const callAccount = await calls.accountOfCallSid(callSid);
  if (callAccount === null || callAccount === signedAccountSid) return;
  logger.warn({ callSid, accountSid: signedAccountSid }, 'Twilio callback signed by another account than the call belongs to; refused');
  throw wrongAccount();
}

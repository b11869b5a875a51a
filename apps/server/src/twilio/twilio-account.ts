import { ForbiddenException } from '@nestjs/common';
import type { AppConfig } from '@switchboard/config';
import type { PinoLogger } from 'nestjs-pino';

/** A correctly signed request from another account means a shared token: refuse it. */
export function assertOwnTwilioAccount(config: AppConfig, accountSid: string, logger: PinoLogger): void {
  const expected = config.twilio.accountSid;
  if (expected && expected !== accountSid) {
    logger.warn({ accountSid }, 'Twilio request for another account refused');
    throw new ForbiddenException({ statusCode: 403, error: 'Forbidden', code: 'wrong_account', message: 'Unexpected AccountSid.' });
  }
}

import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '@switchboard/config';
import { CallRepository } from '@switchboard/persistence';
import { mintStreamToken, rejectCallTwiml, type VoiceWebhookParams } from '@switchboard/telephony';
import { PinoLogger } from 'nestjs-pino';
import type { TwilioAccountCredentials } from '../accounts/twilio-account.service';
import { streamToCallTwiml } from './stream-twiml';

/**
 * Answers Twilio's TwiML request for an outbound call (the Url given to calls.create), made when the
 * callee picks up: mint the call's single-use stream token now and connect the media stream, as the
 * inbound voice webhook does. A call that cannot be connected (unknown, over, another CallSid, its
 * stream already started) is just hung up: Twilio would otherwise read an error to the callee.
 */
@Injectable()
export class OutboundAnswerService {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly calls: CallRepository,
    private readonly logger: PinoLogger,
  ) {
    this.logger.setContext(OutboundAnswerService.name);
  }

  async answer(callId: string, params: VoiceWebhookParams, account: TwilioAccountCredentials, now = new Date()): Promise<string> {
    const token = mintStreamToken(this.config.streamTokenTtlMs, now);
    const call = await this.calls.issueOutboundStreamToken({
      callId,
      twilioAccountSid: params.accountSid,
      twilioCallSid: params.callSid,
      streamTokenHash: token.tokenHash,
      streamTokenExpiresAt: token.expiresAt,
    });
    if (!call) {
      this.logger.warn({ callId, callSid: params.callSid }, 'outbound TwiML request for a call that cannot be connected; hanging up');
      return rejectCallTwiml('');
    }
    this.logger.info({ callId, callSid: params.callSid, agentId: call.agentId }, 'outbound call answered');
    return streamToCallTwiml(this.config.publicBaseUrl, call.id, token.token, account);
  }
}

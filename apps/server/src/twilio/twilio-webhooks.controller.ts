import { Body, Controller, Header, HttpCode, Inject, Post, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { APP_CONFIG, type AppConfig } from '@switchboard/config';
import { CallRepository } from '@switchboard/persistence';
import {
  statusCallbackSchema,
  voiceWebhookSchema,
  type StatusCallbackParams,
  type VoiceWebhookParams,
} from '@switchboard/telephony';
import { PinoLogger } from 'nestjs-pino';
import { ZodValidationPipe } from '../common/zod-validation.pipe';
import { InboundCallService } from './inbound-call.service';
import { TwilioSignatureGuard } from './twilio-signature.guard';
import { assertOwnTwilioAccount } from './twilio-account';

/** Twilio's HTTP callbacks. Every route is signature-checked before anything is read or stored. */
@ApiExcludeController()
@Controller('twilio')
@UseGuards(TwilioSignatureGuard)
export class TwilioWebhooksController {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly inboundCalls: InboundCallService,
    private readonly calls: CallRepository,
    private readonly logger: PinoLogger,
  ) {
    this.logger.setContext(TwilioWebhooksController.name);
  }

  @Post('voice')
  @HttpCode(200)
  @Header('Content-Type', 'text/xml; charset=utf-8')
  async voice(@Body(new ZodValidationPipe(voiceWebhookSchema)) params: VoiceWebhookParams): Promise<string> {
    this.assertOwnAccount(params.accountSid);
    return this.inboundCalls.answer(params);
  }

  @Post('status')
  @HttpCode(204)
  async status(@Body(new ZodValidationPipe(statusCallbackSchema)) params: StatusCallbackParams): Promise<void> {
    this.assertOwnAccount(params.accountSid);
    const found = await this.calls.applyStatusCallback({
      twilioCallSid: params.callSid,
      status: params.status,
      sequenceNumber: params.sequenceNumber,
      callDurationSeconds: params.callDurationSeconds,
      billedMinutes: params.billedMinutes,
      at: params.timestamp ?? new Date(),
    });
    // Twilio retries non-2xx responses; an unknown call will never become known, so acknowledge it.
    if (!found) this.logger.warn({ callSid: params.callSid, status: params.status }, 'status callback for an unknown call');
  }

  private assertOwnAccount(accountSid: string): void {
    assertOwnTwilioAccount(this.config, accountSid, this.logger);
  }
}

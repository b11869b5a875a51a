import { Body, Controller, Header, HttpCode, Post, Req, UseFilters, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import {
  statusCallbackSchema,
  voiceWebhookSchema,
  type StatusCallbackParams,
  type VoiceWebhookParams,
} from '@switchboard/telephony';
import { PinoLogger } from 'nestjs-pino';
import { ZodValidationPipe } from '../../common/zod-validation.pipe';
import { CallCallbacksService } from './call-callbacks.service';
import { InboundCallService } from './inbound-call.service';
import { TwilioSignatureGuard, type SignedTwilioRequest } from './twilio-signature.guard';
import { VoiceAnswerDeadlineFilter, voiceDeadlineOf } from './voice-answer-deadline';

/** Twilio's HTTP callbacks. Every route is signature-checked before anything is read or stored. */
@ApiExcludeController()
@Controller('twilio')
@UseGuards(TwilioSignatureGuard)
export class TwilioWebhooksController {
  constructor(
    private readonly inboundCalls: InboundCallService,
    private readonly callbacks: CallCallbacksService,
    private readonly logger: PinoLogger,
  ) {
    this.logger.setContext(TwilioWebhooksController.name);
  }

  @Post('voice')
  @HttpCode(200)
  @Header('Content-Type', 'text/xml; charset=utf-8')
  @UseFilters(VoiceAnswerDeadlineFilter)
  async voice(@Req() request: SignedTwilioRequest, @Body(new ZodValidationPipe(voiceWebhookSchema)) params: VoiceWebhookParams): Promise<string> {
    return this.inboundCalls.answer(params, request.twilioAccount, new Date(), voiceDeadlineOf(request));
  }

  @Post('status')
  @HttpCode(204)
  async status(@Body(new ZodValidationPipe(statusCallbackSchema)) params: StatusCallbackParams): Promise<void> {
    await this.callbacks.assertCallOfAccount(params.callSid, params.accountSid, this.logger);
    const found = await this.callbacks.applyStatus(params);
    // Twilio retries non-2xx responses; an unknown call will never become known, so acknowledge it.
    if (!found) this.logger.warn({ callSid: params.callSid, status: params.status }, 'status callback for an unknown call');
  }
}

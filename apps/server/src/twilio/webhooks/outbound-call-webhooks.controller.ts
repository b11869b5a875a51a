import { Body, Controller, Header, HttpCode, Param, Post, Req, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { amdCallbackSchema, voiceWebhookSchema, type AmdCallbackParams, type VoiceWebhookParams } from '@switchboard/telephony';
import { PinoLogger } from 'nestjs-pino';
import { callIdParam } from '../../calls/outbound-call-requests.schema';
import { ZodValidationPipe } from '../../common/zod-validation.pipe';
import { MediaStreamService } from '../media-stream/media-stream.service';
import { CallCallbacksService } from './call-callbacks.service';
import { OutboundAnswerService } from './outbound-answer.service';
import { TwilioSignatureGuard, type SignedTwilioRequest } from './twilio-signature.guard';

/** Twilio's callbacks for calls placed with POST /v1/calls; signature-checked like every /twilio route. */
@ApiExcludeController()
@Controller('twilio')
@UseGuards(TwilioSignatureGuard)
export class OutboundCallWebhooksController {
  constructor(
    private readonly outboundAnswer: OutboundAnswerService,
    private readonly callbacks: CallCallbacksService,
    private readonly media: MediaStreamService,
    private readonly logger: PinoLogger,
  ) {
    this.logger.setContext(OutboundCallWebhooksController.name);
  }

  /** The TwiML URL given to calls.create: Twilio fetches it when the callee answers. */
  @Post('outbound/:callId')
  @HttpCode(200)
  @Header('Content-Type', 'text/xml; charset=utf-8')
  async outbound(
    @Req() request: SignedTwilioRequest,
    @Param('callId', new ZodValidationPipe(callIdParam)) callId: string,
    @Body(new ZodValidationPipe(voiceWebhookSchema)) params: VoiceWebhookParams,
  ): Promise<string> {
    // The stream token is only issued to the account that placed the call (checked in the same statement).
    return this.outboundAnswer.answer(callId, params, request.twilioAccount);
  }

  /** asyncAmdStatusCallback: who (or what) answered. Recorded on the call, and told to its live agent. */
  @Post('amd')
  @HttpCode(204)
  async amd(@Body(new ZodValidationPipe(amdCallbackSchema)) params: AmdCallbackParams): Promise<void> {
    await this.callbacks.assertCallOfAccount(params.callSid, params.accountSid, this.logger);
    const recorded = await this.callbacks.recordAnsweredBy({
      twilioCallSid: params.callSid,
      answeredBy: params.answeredBy,
      detectionDurationMs: params.detectionDurationMs,
      at: new Date(),
    });
    // Twilio retries non-2xx answers; an unknown call will never become known, so acknowledge it.
    if (!recorded) {
      this.logger.warn({ callSid: params.callSid }, 'AMD result for an unknown call');
      return;
    }
    const agentTold = this.media.noteAnsweredBy(recorded.callId, params.answeredBy);
    this.logger.info({ callId: recorded.callId, answeredBy: params.answeredBy, agentTold }, 'answering-machine detection result');
  }
}

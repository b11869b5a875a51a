import { Body, Controller, Header, HttpCode, Param, Post, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { statusCallbackSchema, voiceWebhookSchema, type StatusCallbackParams, type VoiceWebhookParams } from '@switchboard/telephony';
import { z } from 'zod';
import { ZodValidationPipe } from '../common/zod-validation.pipe';
import { TwilioSignatureGuard } from '../twilio/webhooks/twilio-signature.guard';
import { WarmTransferService } from './warm-transfer.service';

const transferIdParam = z.guid({ error: 'transfer id must be a uuid' });

/**
 * A <Conference> statusCallback: participant-join / participant-leave (with the participant's
 * CallSid), conference-start / conference-end (without). Other fields Twilio sends are not read.
 */
const conferenceCallbackSchema = z
  .object({
    AccountSid: z.string({ error: 'AccountSid is required' }).min(1),
    StatusCallbackEvent: z.string({ error: 'StatusCallbackEvent is required' }).regex(/^[a-z-]{1,40}$/, 'StatusCallbackEvent must be a word such as participant-join'),
    CallSid: z.string().max(64).optional(),
  })
  .transform((form) => ({ accountSid: form.AccountSid, event: form.StatusCallbackEvent, callSid: form.CallSid ?? '' }));
type ConferenceCallbackParams = z.output<typeof conferenceCallbackSchema>;

/**
 * Twilio's callbacks for a warm transfer (URLs given in the TwiML and calls.create of
 * WarmTransferService), signature-checked like every /twilio route; the service checks the signing
 * account is the call's. Unknown transfers are acknowledged (Twilio retries errors).
 */
@ApiExcludeController()
@Controller('twilio/transfers')
@UseGuards(TwilioSignatureGuard)
export class WarmTransferWebhooksController {
  constructor(private readonly transfers: WarmTransferService) {}

  /** The destination answered: Twilio fetches what it hears (the whisper) and where it goes (the conference). */
  @Post(':transferId/whisper')
  @HttpCode(200)
  @Header('Content-Type', 'text/xml; charset=utf-8')
  whisper(
    @Param('transferId', new ZodValidationPipe(transferIdParam)) transferId: string,
    @Body(new ZodValidationPipe(voiceWebhookSchema)) params: VoiceWebhookParams,
  ): Promise<string> {
    // The signature guard verified the form with the token of its AccountSid: that account signed it.
    return this.transfers.answered(transferId, params.accountSid, params.callSid);
  }

  /** The destination's call status: ringing, answered, and how it ended (no-answer, busy, failed, completed). */
  @Post(':transferId/dial-status')
  @HttpCode(204)
  async dialStatus(
    @Param('transferId', new ZodValidationPipe(transferIdParam)) transferId: string,
    @Body(new ZodValidationPipe(statusCallbackSchema)) params: StatusCallbackParams,
  ): Promise<void> {
    await this.transfers.dialStatus(transferId, params);
  }

  /** The conference: who joined and left. */
  @Post(':transferId/conference')
  @HttpCode(204)
  async conference(
    @Param('transferId', new ZodValidationPipe(transferIdParam)) transferId: string,
    @Body(new ZodValidationPipe(conferenceCallbackSchema)) params: ConferenceCallbackParams,
  ): Promise<void> {
    await this.transfers.conferenceEvent(transferId, params.accountSid, params.event, params.callSid);
  }
}

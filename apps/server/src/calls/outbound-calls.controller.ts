import { Body, Controller, HttpCode, HttpStatus, Param, Post, Res, UseGuards } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import type { CallRecord } from '@switchboard/persistence';
import type { Response } from 'express';
import { ApiKeyGuard, type ApiPrincipal } from '../auth/api-key.guard';
import { Principal } from '../auth/principal.decorator';
import { RequireScope } from '../auth/require-scope.decorator';
import { ZodValidationPipe } from '../common/zod-validation.pipe';
import { ApiErrors, ApiKeyAuthenticated } from '../openapi/api-schemas';
import { CallDto } from './call-responses.schema';
import { budgetExceeded, CAPACITY_RETRY_AFTER_SECONDS, capacityReached, CONCURRENCY_RETRY_AFTER_SECONDS, concurrencyLimitReached } from './outbound-call-errors';
import { callIdParam, placeCallBody, PlaceCallBodyDto } from './outbound-call-requests.schema';
import { OutboundCallService } from './outbound-call.service';

/** Placing and hanging up calls (admin); reading them is CallsController. */
@ApiTags('Calls')
@ApiKeyAuthenticated()
@Controller('v1/calls')
@UseGuards(ApiKeyGuard)
export class OutboundCallsController {
  constructor(private readonly outbound: OutboundCallService) {}

  /**
   * 201 with the call (status 'queued', twilioCallSid set); 429 + Retry-After over the
   * organization's concurrency limit; 502 when Twilio refused (the call is then recorded as failed).
   */
  @Post()
  @RequireScope('admin')
  @HttpCode(HttpStatus.CREATED)
  @ApiCreatedResponse({
    type: CallDto,
    description:
      'Placed through Twilio (calls.create with our TwiML URL, status callbacks and optional asynchronous answering-machine detection). ' +
      'The agent sees `variables` as {{call.params.NAME}} and the detection verdict as {{call.answeredBy}}. ' +
      'With machineDetection `DetectMessageEnd`, a machine that answers gets the voicemail (`voicemail`, else the agent config\'s) after its beep, and the call ends `voicemail_left`; ' +
      'a voicemail with any other detection mode is a 400 (`voicemail_needs_detect_message_end`). ' +
      '429 (`concurrency_limit`, with Retry-After) when the organization is at its concurrency limit; 402 (`budget_exceeded`) when it spent its monthly budget and chose a hard limit; 502 (`twilio_error`) when Twilio refused, the call is then recorded as failed; ' +
      '503 (`capacity`, with Retry-After) when this server\'s inference workers are planned full (INFERENCE_MAX_UTILISATION); ' +
      '409 (`agent_not_ready`, with `problems`) when the agent cannot take calls yet (see the agent\'s `readiness`).',
  })
  @ApiErrors(400, 402, 403, 409, 429, 502, 503)
  async place(
    @Principal() principal: ApiPrincipal,
    @Body(new ZodValidationPipe(placeCallBody)) body: PlaceCallBodyDto,
    @Res({ passthrough: true }) response: Response,
  ): Promise<CallRecord> {
    const outcome = await this.outbound.place(principal.organizationId, body);
    if (!outcome.placed) {
      if (outcome.refusal.reason === 'budget_exceeded') throw budgetExceeded(outcome.refusal.budget);
      if (outcome.refusal.reason === 'capacity') {
        response.setHeader('Retry-After', String(CAPACITY_RETRY_AFTER_SECONDS));
        throw capacityReached(outcome.refusal.capacity);
      }
      response.setHeader('Retry-After', String(CONCURRENCY_RETRY_AFTER_SECONDS));
      throw concurrencyLimitReached(outcome.refusal.snapshot);
    }
    return outcome.call;
  }

  /** 200 with the call, finalised with end reason 'api_hangup'; 409 when it has already ended. */
  @Post(':id/hangup')
  @RequireScope('admin')
  @HttpCode(HttpStatus.OK)
  @ApiOkResponse({ type: CallDto, description: 'Twilio was told to end the call; it is recorded with end reason `api_hangup`.' })
  @ApiErrors(403, 404, 409, 502)
  hangUp(@Principal() principal: ApiPrincipal, @Param('id', new ZodValidationPipe(callIdParam)) id: string): Promise<CallRecord> {
    return this.outbound.hangUp(principal.organizationId, id);
  }
}

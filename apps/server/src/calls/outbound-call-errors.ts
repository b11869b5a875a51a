import { BadRequestException, ConflictException, HttpException, HttpStatus, NotFoundException, ServiceUnavailableException } from '@nestjs/common';
import { formatMicros } from '@switchboard/billing';
import type { BudgetStatus, CapacityRefusalSnapshot, ConcurrencySnapshot } from '@switchboard/persistence';
import type { TwilioFailure } from '../twilio/call-control/twilio-failure';

/** How long a client refused over the concurrency limit is told to wait before trying again. */
export const CONCURRENCY_RETRY_AFTER_SECONDS = 30;

export function callNotFound(id: string): NotFoundException {
  return new NotFoundException({ statusCode: 404, error: 'Not Found', code: 'call_not_found', message: `No call ${id}.` });
}

export function fromNumberNotOwned(from: string): BadRequestException {
  return new BadRequestException({
    statusCode: 400,
    error: 'Bad Request',
    code: 'from_number_not_owned',
    message: `${from} is not one of this organization's phone numbers; register it with POST /v1/phone-numbers first.`,
  });
}

export function twilioNotConfigured(): ServiceUnavailableException {
  return new ServiceUnavailableException({
    statusCode: 503,
    error: 'Service Unavailable',
    code: 'twilio_not_configured',
    message: "Placing calls needs a Twilio account: the organization's own (PUT /v1/organization/twilio-account), or for the default organization TWILIO_ACCOUNT_SID and TWILIO_AUTH_TOKEN on the server.",
  });
}

export function concurrencyLimitReached(snapshot: ConcurrencySnapshot): HttpException {
  return new HttpException(
    {
      statusCode: 429,
      error: 'Too Many Requests',
      code: 'concurrency_limit',
      message: `This organization already has ${snapshot.activeCalls} live calls, its limit is ${snapshot.limit}. Try again when a call has ended.`,
      limit: snapshot.limit,
      activeCalls: snapshot.activeCalls,
      retryAfterSeconds: CONCURRENCY_RETRY_AFTER_SECONDS,
    },
    HttpStatus.TOO_MANY_REQUESTS,
  );
}

/** How long a client refused for the server's inference capacity is told to wait (calls last minutes). */
export const CAPACITY_RETRY_AFTER_SECONDS = 30;

/**
 * This server's inference workers are planned full (INFERENCE_MAX_UTILISATION): one more call would
 * slow every live caller's replies. Not the organization's doing, so a 503 rather than a 429.
 */
export function capacityReached(capacity: CapacityRefusalSnapshot): HttpException {
  return new HttpException(
    {
      statusCode: 503,
      error: 'Service Unavailable',
      code: 'capacity',
      message: 'This server is at its inference capacity: one more call would slow the replies of the calls in progress. Try again when a call has ended.',
      maxUtilisation: capacity.maxUtilisation,
      predictedUtilisation: capacity.predictedUtilisation,
      costPerCall: capacity.costPerCall,
      workers: capacity.workers,
      retryAfterSeconds: CAPACITY_RETRY_AFTER_SECONDS,
    },
    HttpStatus.SERVICE_UNAVAILABLE,
  );
}

/** The organization spent this month's budget and chose a hard limit: no new calls until next month or a higher budget. */
export function budgetExceeded(budget: BudgetStatus & { currency: string }): HttpException {
  const spent = `${formatMicros(budget.spentMicros)} ${budget.currency}`;
  const limit = `${formatMicros(budget.budgetMicros ?? 0)} ${budget.currency}`;
  return new HttpException(
    {
      statusCode: 402,
      error: 'Payment Required',
      code: 'budget_exceeded',
      message: `This organization has spent ${spent} of its ${limit} monthly budget and refuses new calls (hard limit). Raise the budget with PATCH /v1/organization.`,
      budgetMicros: budget.budgetMicros,
      spentMicros: budget.spentMicros,
      currency: budget.currency,
    },
    HttpStatus.PAYMENT_REQUIRED,
  );
}

/** Twilio refused or could not be reached; the body says what Twilio said (never credentials). */
export function twilioRefused(action: string, callId: string, failure: TwilioFailure): HttpException {
  return new HttpException(
    {
      statusCode: 502,
      error: 'Bad Gateway',
      code: 'twilio_error',
      message: `Twilio did not ${action}: ${failure.message}`,
      callId,
      twilio: failure,
    },
    HttpStatus.BAD_GATEWAY,
  );
}

export function callAlreadyEnded(id: string): ConflictException {
  return new ConflictException({ statusCode: 409, error: 'Conflict', code: 'call_already_ended', message: `Call ${id} has already ended.` });
}

export function callNotPlacedYet(id: string): ConflictException {
  return new ConflictException({
    statusCode: 409,
    error: 'Conflict',
    code: 'call_not_placed_yet',
    message: `Call ${id} is still being placed with Twilio; try again in a moment.`,
  });
}

export function webCallHangUp(id: string): ConflictException {
  return new ConflictException({
    statusCode: 409,
    error: 'Conflict',
    code: 'web_call_not_twilio',
    message: `Call ${id} is a web call: no Twilio call to hang up. It ends when the browser hangs up or the agent ends it.`,
  });
}

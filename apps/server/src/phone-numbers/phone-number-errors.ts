import { BadGatewayException, BadRequestException, ConflictException, HttpException, NotFoundException } from '@nestjs/common';
import type { TwilioAccountError } from '../twilio/accounts/twilio-account.service';

export function phoneNumberNotFound(id: string): NotFoundException {
  return new NotFoundException({ statusCode: 404, error: 'Not Found', code: 'phone_number_not_found', message: `No phone number ${id}.` });
}

/**
 * The agent named in the body does not exist in the organization. A 400, not a 404: the resource
 * in the URL is fine, the request refers to something that is not there.
 */
export function unknownAgent(agentId: string): BadRequestException {
  return new BadRequestException({
    statusCode: 400,
    error: 'Bad Request',
    code: 'agent_not_found',
    message: `Agent ${agentId} does not exist in this organization.`,
  });
}

/** Numbers are unique per deployment: an incoming call's To number alone picks the organization. */
export function phoneNumberTaken(e164: string): ConflictException {
  return new ConflictException({
    statusCode: 409,
    error: 'Conflict',
    code: 'phone_number_taken',
    message: `${e164} is registered to another organization.`,
  });
}

/** A number binds only if Twilio says it is a number of the organization's own account. */
export function numberNotInAccount(e164: string): BadRequestException {
  return new BadRequestException({
    statusCode: 400,
    error: 'Bad Request',
    code: 'number_not_in_twilio_account',
    message: `${e164} is not a number of your Twilio account (IncomingPhoneNumbers); buy or port it there first.`,
  });
}

/** The ownership check could not be made: no account connected (400) or Twilio unreachable (502). */
export function ownershipUnchecked(error: TwilioAccountError): HttpException {
  if (error.code === 'twilio_account_missing') return new BadRequestException({ statusCode: 400, error: 'Bad Request', code: error.code, message: error.message });
  return new BadGatewayException({ statusCode: 502, error: 'Bad Gateway', code: error.code, message: error.message });
}

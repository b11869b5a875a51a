import { BadRequestException, ConflictException, NotFoundException } from '@nestjs/common';
import type { CampaignStatus } from '@switchboard/persistence';
import type { ContactIssue } from './campaign-contacts-csv';

export function campaignNotFound(id: string): NotFoundException {
  // Another organization's campaign is indistinguishable from a missing one.
  return new NotFoundException({ statusCode: 404, error: 'Not Found', code: 'campaign_not_found', message: `No campaign ${id}.` });
}

export function campaignFinished(id: string, status: CampaignStatus, action: string): ConflictException {
  return new ConflictException({
    statusCode: 409,
    error: 'Conflict',
    code: 'campaign_finished',
    message: `Campaign ${id} is ${status}: it cannot be ${action}.`,
    status,
  });
}

/** The same 400 as the request validation pipe (validation_failed, one detail per field and rule), for checks made after it. */
export function invalidCampaign(details: ContactIssue[]): BadRequestException {
  return new BadRequestException({ statusCode: 400, error: 'Bad Request', code: 'validation_failed', message: 'The request is invalid.', details });
}

import { z } from 'zod';
import { createApiDto, uuid } from '../openapi/api-schemas';

export const claimFirstRunBody = z.strictObject({
  token: z.string().min(16).max(200).describe('The token from the first-run link (the part after /#/first-run/).'),
});
export class ClaimFirstRunBodyDto extends createApiDto(claimFirstRunBody) {}

export class ClaimedFirstRunKeyDto extends createApiDto(
  z.strictObject({
    apiKey: z.string().describe('The new admin key: shown in this response only, stored hashed.'),
    apiKeyId: uuid,
    prefix: z.string(),
    organizationId: uuid,
  }),
) {}

import { API_KEY_SCOPES, BOOTSTRAP_API_KEY_NAME } from '@switchboard/persistence';
import { z } from 'zod';
import { createApiDto, isoDateTime, nullableDateTime, uuid } from '../openapi/api-schemas';

export const createApiKeyBody = z.strictObject({
  name: z
    .string()
    .trim()
    .min(1)
    .max(200)
    // Restarting the server revokes every other key with this name (it rotates ADMIN_API_KEY).
    .refine((name) => name !== BOOTSTRAP_API_KEY_NAME, { message: `"${BOOTSTRAP_API_KEY_NAME}" is reserved.` }),
  scopes: z
    .array(z.enum(API_KEY_SCOPES))
    .min(1)
    .refine((scopes) => new Set(scopes).size === scopes.length, { message: 'Scopes must not repeat.' }),
});
export type CreateApiKeyBody = z.infer<typeof createApiKeyBody>;

export const apiKeyIdParam = z.string().min(1).max(64);

export class CreateApiKeyBodyDto extends createApiDto(createApiKeyBody) {}

/** Documented response shapes (see openapi/api-schemas.ts). */
export const apiKeySchema = z.strictObject({
  id: uuid,
  name: z.string(),
  prefix: z.string().describe('The first characters of the key, to tell keys apart.'),
  scopes: z.array(z.enum(API_KEY_SCOPES)),
  createdAt: isoDateTime,
  lastUsedAt: nullableDateTime.describe('Kept to the minute.'),
  revokedAt: nullableDateTime,
});
export class ApiKeyDto extends createApiDto(apiKeySchema) {}
export class CreatedApiKeyDto extends createApiDto(
  apiKeySchema.extend({ key: z.string().describe('The raw key: shown in this response only, stored hashed.') }),
) {}
export class ApiKeyListDto extends createApiDto(z.strictObject({ data: z.array(apiKeySchema) })) {}
export class CurrentApiKeyDto extends createApiDto(apiKeySchema.extend({ organizationId: uuid })) {}

import { z } from 'zod';
import { SECRET_NAME_PATTERN } from '@switchboard/persistence';
import { createApiDto, isoDateTime } from '../openapi/api-schemas';
import { MAX_SECRET_VALUE_CHARS } from './secrets.service';

const secretName = z
  .string()
  .regex(SECRET_NAME_PATTERN, 'must be 1-64 letters, digits, "_", "." or "-", starting with a letter')
  .describe('What agent configs reference (e.g. llm.apiKeySecret).');
const secretValue = z.string().min(1).max(MAX_SECRET_VALUE_CHARS).describe('Stored encrypted; never shown again.');

export const secretNameParam = secretName;

export const createSecretBody = z.strictObject({ name: secretName, value: secretValue });
export class CreateSecretBodyDto extends createApiDto(createSecretBody) {}

export const replaceSecretBody = z.strictObject({ value: secretValue });
export class ReplaceSecretBodyDto extends createApiDto(replaceSecretBody) {}

const secretSchema = z.strictObject({
  name: z.string(),
  hint: z.string().describe("The value's last 4 characters (empty for values shorter than 16 characters)."),
  version: z.number().int().describe('1 when created, +1 on every replacement.'),
  createdAt: isoDateTime,
  updatedAt: isoDateTime,
});
export class SecretDto extends createApiDto(secretSchema) {}
export class SecretListDto extends createApiDto(z.strictObject({ data: z.array(secretSchema) })) {}

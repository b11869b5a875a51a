import { isE164 } from '@switchboard/persistence';
import { z } from 'zod';
import { createApiDto, isoDateTime, pageOf, uuid } from '../openapi/api-schemas';

/** The agent answering the number; null (or omitted on create) leaves it unrouted. */
const agentReference = z.string().min(1).max(64).nullable();

export const createPhoneNumberBody = z.strictObject({
  e164: z.string().refine(isE164, { message: 'must be an E.164 number, e.g. +14155550100' }),
  agentId: agentReference.default(null),
});
export type CreatePhoneNumberBody = z.infer<typeof createPhoneNumberBody>;

export const updatePhoneNumberBody = z.strictObject({ agentId: agentReference });
export type UpdatePhoneNumberBody = z.infer<typeof updatePhoneNumberBody>;

export const listPhoneNumbersQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  cursor: z.string().min(1).max(512).optional(),
});
export type ListPhoneNumbersQuery = z.infer<typeof listPhoneNumbersQuery>;

export const phoneNumberIdParam = z.string().min(1).max(64);

export class CreatePhoneNumberBodyDto extends createApiDto(createPhoneNumberBody) {}
export class UpdatePhoneNumberBodyDto extends createApiDto(updatePhoneNumberBody) {}
export class ListPhoneNumbersQueryDto extends createApiDto(listPhoneNumbersQuery) {}

/** Documented response shape (see openapi/api-schemas.ts). */
export const phoneNumberSchema = z.strictObject({
  id: uuid,
  e164: z.string(),
  organizationId: uuid,
  agentId: uuid.nullable().describe('The agent answering calls to this number; null: calls are refused politely.'),
  createdAt: isoDateTime,
  updatedAt: isoDateTime,
});
export class PhoneNumberDto extends createApiDto(phoneNumberSchema) {}
export class PhoneNumberPageDto extends createApiDto(pageOf(phoneNumberSchema)) {}

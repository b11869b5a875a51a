import { applyDecorators } from '@nestjs/common';
import { ApiBearerAuth, ApiResponse } from '@nestjs/swagger';
import { createZodDto } from 'nestjs-zod';
import { z } from 'zod';

/**
 * createZodDto, with one repair: zod writes a nullable bare primitive as `type: ["string", "null"]`,
 * which nestjs-zod passes through and @nestjs/swagger then misreads as an ARRAY of strings (so
 * `nextCursor: string | null` was documented as `string[]`). Such types are rewritten to OpenAPI
 * 3.0's `type: "string", nullable: true` before swagger sees them. Use this for every API DTO.
 */
export function createApiDto<T extends z.ZodType>(schema: T) {
  const Base = createZodDto(schema);
  const factory = (Base as unknown as { _OPENAPI_METADATA_FACTORY: () => unknown })._OPENAPI_METADATA_FACTORY;
  class ApiDto extends (Base as unknown as new () => object) {
    static _OPENAPI_METADATA_FACTORY(): unknown {
      return withNullableTypes(factory.call(this));
    }
  }
  return ApiDto as unknown as typeof Base;
}

function withNullableTypes(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withNullableTypes);
  if (typeof node !== 'object' || node === null) return node;
  const copy: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) copy[key] = withNullableTypes(value);
  const type = copy['type'];
  if (Array.isArray(type) && type.includes('null')) {
    const others = type.filter((entry) => entry !== 'null');
    if (others.length === 1) {
      copy['type'] = others[0];
      copy['nullable'] = true;
    }
  }
  return copy;
}

/*
 * Building blocks of the documented response shapes. Responses are plain JSON built by the
 * controllers; these schemas describe them for the OpenAPI document, and the API contract test
 * (test/e2e/openapi-contract.e2e-spec.ts) parses real responses with them, so a response that
 * drifts from its documentation fails CI.
 */

/** Dates leave the server as ISO 8601 UTC strings (JSON.stringify of a Date). */
export const isoDateTime = z.iso.datetime();
export const nullableDateTime = isoDateTime.nullable();
export const uuid = z.guid();

export const errorBody = z
  .object({
    statusCode: z.number().int(),
    error: z.string(),
    /** Machine-readable: validation_failed, invalid_api_key, agent_not_found, rate_limited, ... */
    code: z.string(),
    message: z.string(),
    details: z
      .array(z.object({ field: z.string(), rule: z.string(), message: z.string() }))
      .optional()
      .describe('Validation failures: one entry per field and broken rule.'),
  });
export class ErrorBodyDto extends createApiDto(errorBody) {}

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'The request is invalid; `details` names each field and the rule it broke.',
  401: 'No API key, or an unknown or revoked one.',
  402: 'The organization spent its monthly budget and chose a hard limit (`budget_exceeded`).',
  403: 'The API key lacks the scope this route needs (`insufficient_scope`).',
  404: 'No such resource in the API key\'s organization (another organization\'s resources are indistinguishable from missing ones).',
  409: 'The request conflicts with the current state.',
  429: 'Over a rate limit (the API key\'s, its organization\'s over all its keys, the client address\'s without a valid key, or the organization\'s webhook replays; see `Retry-After`), or over the organization\'s concurrency limit.',
  502: 'An upstream service (Twilio) refused or could not be reached.',
  503: 'This server\'s inference workers are planned full (`capacity`, INFERENCE_MAX_UTILISATION): a new call would slow the calls in progress; see `retryAfterSeconds`.',
};

/** Documents error answers with the common error body. */
export function ApiErrors(...statuses: number[]) {
  return applyDecorators(...statuses.map((status) => ApiResponse({ status, type: ErrorBodyDto, description: ERROR_DESCRIPTIONS[status] ?? '' })));
}

/** Every /v1 controller: bearer API key, 401 without a valid one, 429 over the rate limit. */
export function ApiKeyAuthenticated() {
  return applyDecorators(ApiBearerAuth(), ApiErrors(401, 429));
}

/** A page of a cursor-paginated list. */
export function pageOf<T extends z.ZodType>(item: T) {
  return z.object({
    data: z.array(item),
    nextCursor: z.string().nullable().describe('Pass as `cursor` for the next page; null on the last page.'),
  });
}

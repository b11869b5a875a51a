import { AgentConfigSchema } from './documented-agent-config';
import { AGENT_ENGINES } from '@switchboard/persistence';
import { z } from 'zod';
import { createApiDto, isoDateTime, pageOf, uuid } from '../openapi/api-schemas';

/** Documented response shapes of the agents API (see openapi/api-schemas.ts). */
export const agentReadinessSchema = z
  .strictObject({
    ready: z.boolean().describe('Whether a call to the agent can work now: false refuses web calls (409 agent_not_ready) and answers phone calls with a polite message.'),
    problems: z
      .array(z.strictObject({ path: z.string().describe('The config field to fix, e.g. llm.apiKeySecret.'), message: z.string() }))
      .describe('Every reason it is not ready: a missing key or secret, an unknown or unpulled local model, an engine host this server may not reach.'),
  })
  .describe("Computed from the config and this server's state (secrets, pulled models, the outbound rule) each time the agent is read.");

export const agentSummarySchema = z
  .strictObject({
    id: uuid,
    name: z.string(),
    engine: z.enum(AGENT_ENGINES),
    version: z.number().int().describe('The config version new calls use.'),
    readiness: agentReadinessSchema,
    createdAt: isoDateTime,
    updatedAt: isoDateTime,
  });

export const agentSchema = agentSummarySchema
  .extend({ config: AgentConfigSchema.describe('The config of `version`, with every default filled in.') });

export const agentConfigVersionSchema = z
  .strictObject({ agentId: uuid, version: z.number().int(), config: AgentConfigSchema });

export const agentPageSchema = pageOf(agentSummarySchema);

/** GET /v1/agents/config-schema: a JSON Schema document, described by the keys every client relies on. */
export const agentConfigJsonSchemaSchema = z
  .looseObject({
    $schema: z.string(),
    type: z.literal('object'),
    properties: z.record(z.string(), z.record(z.string(), z.unknown())),
    additionalProperties: z.literal(false),
  })
  .describe('The agent config as JSON Schema (draft 2020-12), made from the schema a saved config is validated with.');

export class AgentDto extends createApiDto(agentSchema) {}
export class AgentConfigVersionDto extends createApiDto(agentConfigVersionSchema) {}
export class AgentPageDto extends createApiDto(agentPageSchema) {}
export class AgentConfigJsonSchemaDto extends createApiDto(agentConfigJsonSchemaSchema) {}

import { AgentConfigSchema } from './documented-agent-config';
import { AGENT_ENGINES } from '@switchboard/persistence';
import { z } from 'zod';
import { createApiDto } from '../openapi/api-schemas';

/*
 * Request shapes of the agents API. `config` is only checked to be present here: its contents are
 * validated by the conversation lib's agent config schema (see agent-config-validation.ts), whose
 * problems are reported in their own machine-readable body.
 */

const agentName = z.string().trim().min(1).max(200);

export const createAgentBody = z.strictObject({
  name: agentName,
  engine: z.enum(AGENT_ENGINES),
  /** Omitted means "all defaults". */
  config: z.unknown().optional(),
});
export type CreateAgentBody = z.infer<typeof createAgentBody>;

/** The engine is fixed at creation: a config for one engine is not meaningful for another. */
export const updateAgentBody = z
  .strictObject({
    name: agentName.optional(),
    /** Replaces the whole config (defaults filled in again), it is not merged into the old one. */
    config: z.unknown().optional(),
  })
  .refine((body) => body.name !== undefined || body.config !== undefined, { message: 'Send name and/or config.' });
export type UpdateAgentBody = z.infer<typeof updateAgentBody>;

export const listAgentsQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  cursor: z.string().min(1).max(512).optional(),
});
export type ListAgentsQuery = z.infer<typeof listAgentsQuery>;

export const agentIdParam = z.string().min(1).max(64);

export const configVersionParam = z.coerce.number().int().min(1).max(2_147_483_647);

/*
 * Documentation DTOs (OpenAPI, via nestjs-zod). The routes validate with the schemas above; these
 * differ only in showing `config` as the agent config schema it is checked against afterwards.
 */
export class CreateAgentBodyDto extends createApiDto(createAgentBody.extend({ config: AgentConfigSchema.optional() })) {}
export class UpdateAgentBodyDto extends createApiDto(
  z.strictObject({ name: agentName.optional(), config: AgentConfigSchema.optional().describe('Replaces the whole config.') }),
) {}
export class ListAgentsQueryDto extends createApiDto(listAgentsQuery) {}

import { z } from 'zod';
import { createApiDto, isoDateTime, nullableDateTime, uuid } from '../openapi/api-schemas';
import { scenarioSuite } from './scenario-suite.schema';

/** Documented response shapes of the scenario tests API (see openapi/api-schemas.ts). */

export const suiteSummarySchema = z.strictObject({
  id: uuid,
  agentId: uuid,
  name: z.string(),
  scenarioCount: z.number().int(),
  turnCount: z.number().int(),
  createdAt: isoDateTime,
  updatedAt: isoDateTime,
});

export const suiteSchema = suiteSummarySchema.extend({ definition: scenarioSuite.describe('The suite as stored (defaults filled in).') });

const turnResultSchema = z.strictObject({
  said: z.string().describe('The turn\'s `say` text, or "(recording)".'),
  heard: z.string().describe('What the agent\'s recogniser heard in this turn.'),
  reply: z.string().describe('What the agent said in reply, as the caller heard it.'),
  toolCalls: z.array(z.strictObject({ name: z.string(), arguments: z.unknown(), error: z.string().nullable() })),
  failures: z.array(z.string()).describe('The expectations this turn failed, each with what happened instead; empty when it passed.'),
});

const scenarioResultSchema = z.strictObject({
  scenario: z.string(),
  passed: z.boolean(),
  callId: uuid.nullable().describe('The web call the scenario placed (GET /v1/calls/{id}).'),
  endReason: z.string().nullable(),
  error: z.string().nullable().describe('Why the scenario could not be judged (refused call, unreadable WAV, ...).'),
  turns: z.array(turnResultSchema),
  transcript: z.array(
    z.strictObject({ role: z.string(), source: z.string(), text: z.string(), heardText: z.string().nullable(), interrupted: z.boolean(), startMs: z.number() }),
  ),
});

export const runSchema = z.strictObject({
  id: uuid,
  agentId: uuid,
  suiteId: uuid,
  suiteName: z.string(),
  agentConfigVersion: z.number().int().describe('The agent config version the run\'s calls used.'),
  status: z.enum(['running', 'passed', 'failed', 'error']),
  error: z.string().nullable(),
  passed: z.number().int().describe('Scenarios passed so far.'),
  failed: z.number().int().describe('Scenarios failed so far.'),
  scenarioCount: z.number().int(),
  results: z.array(scenarioResultSchema).describe('One per finished scenario, in suite order.'),
  createdAt: isoDateTime,
  finishedAt: nullableDateTime,
});

export class AgentTestSuiteSummaryDto extends createApiDto(suiteSummarySchema) {}
export class AgentTestSuiteDto extends createApiDto(suiteSchema) {}
export class AgentTestSuiteListDto extends createApiDto(z.strictObject({ data: z.array(suiteSummarySchema) })) {}
export class AgentTestRunDto extends createApiDto(runSchema) {}
export class AgentTestRunListDto extends createApiDto(z.strictObject({ data: z.array(runSchema) })) {}

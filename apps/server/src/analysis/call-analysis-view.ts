import type { CallAnalysisRecord } from '@switchboard/persistence';
import { z } from 'zod';
import { isoDateTime } from '../openapi/api-schemas';

export const callAnalysisSchema = z.strictObject({
  status: z.enum(['pending', 'running', 'completed', 'failed']).describe("'pending'/'running' until the analysis LLM has answered; 'failed' after its last retry (see error)."),
  summary: z.string().nullable(),
  structuredData: z.unknown().describe("The data extracted into the agent's analysis.structuredData schema (as the model gave it, when it did not validate); null when none."),
  structuredDataErrors: z.array(z.string()).nullable().describe('Why structuredData does not match the schema, after one retry with these errors; null when it matches.'),
  success: z.boolean().nullable().describe('Whether the call met analysis.successCriteria (null without criteria).'),
  successReason: z.string().nullable(),
  model: z.string().nullable(),
  attempts: z.number().int(),
  inputTokens: z.number().int().describe('Every run of this analysis, re-runs included (charged as analysis lines in the ledger).'),
  outputTokens: z.number().int(),
  error: z.string().nullable().describe("The last failed attempt's reason."),
  createdAt: isoDateTime,
  completedAt: isoDateTime.nullable(),
});

export type CallAnalysisView = z.infer<typeof callAnalysisSchema>;

export function callAnalysisView(record: CallAnalysisRecord): CallAnalysisView {
  return {
    status: record.status,
    summary: record.summary,
    structuredData: record.structuredData,
    structuredDataErrors: record.structuredDataErrors,
    success: record.success,
    successReason: record.successReason,
    model: record.model,
    attempts: record.attempts,
    inputTokens: record.inputTokens,
    outputTokens: record.outputTokens,
    error: record.error,
    createdAt: record.createdAt.toISOString(),
    completedAt: record.completedAt?.toISOString() ?? null,
  };
}

import type { ArgumentValidator } from '@switchboard/conversation';
import type { AnalysisConfig } from '@switchboard/agent-config';
import type { ChatMessage } from '@switchboard/inference';
import type { JsonValue } from '@switchboard/persistence';

/** The conversation as the analysis reads it (from the call's stored records). */
export interface AnalysedCall {
  transcript: ReadonlyArray<{ role: string; text: string; heardText: string | null; interrupted: boolean; startMs: number }>;
  toolInvocations: ReadonlyArray<{ name: string; arguments: unknown; result: unknown; error: string | null; startedAtMs: number }>;
}

/** The transcript sent to the LLM is bounded: the end of a very long call matters most, so its start is cut. */
export const MAX_TRANSCRIPT_CHARS = 60_000;
const MAX_TOOL_TEXT_CHARS = 500;
/** A summary or reason longer than this is cut (an LLM that rambles cannot fill the database). */
const MAX_TEXT_FIELD_CHARS = 8_000;

/** What the analysis asks of the model, built from the agent's analysis section. */
export function analysisMessages(config: AnalysisConfig, call: AnalysedCall): ChatMessage[] {
  const keys = [`"summary": a string. ${config.summaryPrompt}`];
  if (config.structuredData) keys.push(`"structuredData": an object that matches this JSON Schema exactly: ${JSON.stringify(config.structuredData)}`);
  if (config.successCriteria) {
    keys.push(`"success": true or false, whether the call met these criteria: ${config.successCriteria}`);
    keys.push('"successReason": a string, one sentence saying why.');
  }
  const system = [
    'You analyse a finished phone call between a caller and an AI agent.',
    'Answer with ONE JSON object and nothing else (no prose, no code fence), with these keys:',
    ...keys.map((key) => `- ${key}`),
    'Use only what the call says; where it says nothing, use null for that value if the schema allows it.',
  ].join('\n');
  return [
    { role: 'system', content: system },
    { role: 'user', content: `The call:\n${callText(call)}` },
  ];
}

/** The follow-up when the first answer did not validate: the model sees its answer and what was wrong. */
export function correctionMessages(first: ChatMessage[], answer: string, problems: readonly string[]): ChatMessage[] {
  return [
    ...first,
    { role: 'assistant', content: answer },
    { role: 'user', content: `That answer is not valid: ${problems.join('; ')}. Answer again with one JSON object that fixes this.` },
  ];
}

function callText(call: AnalysedCall): string {
  const lines: Array<{ atMs: number; line: string }> = [
    ...call.transcript.map((turn) => {
      const speaker = turn.role === 'user' ? 'Caller' : 'Agent';
      // An interrupted reply is what the caller heard of it.
      const text = turn.interrupted && turn.heardText !== null ? `${turn.heardText} [interrupted]` : turn.text;
      return { atMs: turn.startMs, line: `[${clock(turn.startMs)}] ${speaker}: ${text}` };
    }),
    ...call.toolInvocations.map((tool) => ({
      atMs: tool.startedAtMs,
      line: `[${clock(tool.startedAtMs)}] Tool ${tool.name}(${bounded(JSON.stringify(tool.arguments))}) -> ${tool.error !== null ? `error: ${bounded(tool.error)}` : bounded(JSON.stringify(tool.result ?? null))}`,
    })),
  ].sort((a, b) => a.atMs - b.atMs);
  const text = lines.map((entry) => entry.line).join('\n') || '(nothing was said)';
  return text.length <= MAX_TRANSCRIPT_CHARS ? text : `[the start of the call is left out]\n${text.slice(text.length - MAX_TRANSCRIPT_CHARS)}`;
}

function clock(ms: number): string {
  const seconds = Math.max(0, Math.floor(ms / 1000));
  return `${String(Math.floor(seconds / 60)).padStart(2, '0')}:${String(seconds % 60).padStart(2, '0')}`;
}

function bounded(text: string | undefined): string {
  const value = text ?? 'null';
  return value.length <= MAX_TOOL_TEXT_CHARS ? value : `${value.slice(0, MAX_TOOL_TEXT_CHARS)}…`;
}

/** One answer, read: what it gives for each key, and what is wrong with it (empty when valid). */
export interface ReadAnswer {
  summary: string | null;
  /** As the model gave it (JSON), null when it gave none. */
  structuredData: JsonValue | null;
  success: boolean | null;
  successReason: string | null;
  problems: string[];
  /** The structured data's own problems (schema validation), kept apart: they are stored when the retry fails too. */
  structuredDataProblems: string[];
}

/** Reads the model's answer against what was asked; never throws. */
export function readAnswer(answer: string, config: AnalysisConfig, validator: ArgumentValidator | undefined): ReadAnswer {
  const read: ReadAnswer = { summary: null, structuredData: null, success: null, successReason: null, problems: [], structuredDataProblems: [] };
  const parsed = parseJsonObject(answer);
  if (parsed === undefined) {
    read.problems.push('the answer is not one JSON object');
    if (validator) read.structuredDataProblems.push('the answer was not a JSON object');
    return read;
  }
  if (typeof parsed['summary'] === 'string' && parsed['summary'].trim().length > 0) read.summary = parsed['summary'].slice(0, MAX_TEXT_FIELD_CHARS);
  else read.problems.push('"summary" must be a non-empty string');
  if (validator) {
    read.structuredData = parsed['structuredData'] ?? null;
    // The validator speaks of tool arguments (it is the tools' one): said here of the structured data.
    const problem = validator.problems(read.structuredData)?.replace("arguments do not match the tool's parameters", 'does not match the schema');
    if (problem !== undefined) {
      read.structuredDataProblems.push(`structuredData: ${problem}`);
      read.problems.push(`"structuredData" ${problem}`);
    }
  }
  if (config.successCriteria) {
    if (typeof parsed['success'] === 'boolean') read.success = parsed['success'];
    else read.problems.push('"success" must be true or false');
    if (typeof parsed['successReason'] === 'string') read.successReason = parsed['successReason'].slice(0, MAX_TEXT_FIELD_CHARS);
    else read.problems.push('"successReason" must be a string');
  }
  return read;
}

/** The JSON object in an answer: as it is, or inside a code fence or prose some models add anyway. */
function parseJsonObject(answer: string): Record<string, unknown> | undefined {
  const start = answer.indexOf('{');
  const end = answer.lastIndexOf('}');
  if (start < 0 || end <= start) return undefined;
  try {
    const value: unknown = JSON.parse(answer.slice(start, end + 1));
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

import { Injectable } from '@nestjs/common';
import { type ArgumentValidator, compileToolSchema, describeSchemaProblems } from '@switchboard/conversation';
import { type AnalysisConfig, AnalysisConfigSchema } from '@switchboard/agent-config';
import { countableUsage } from '@switchboard/billing';
import type { ChatMessage, LlmEngine } from '@switchboard/inference';
import { CallRepository, type AnalysisResult, type ClaimedAnalysis } from '@switchboard/persistence';
import { AgentEngines } from '../agent-engines/agent-engines';
import { analysisMessages, correctionMessages, readAnswer, type ReadAnswer } from './call-analysis-prompt';

/** One LLM request of an analysis may take this long (the whole answer, not the first token). */
const ANALYSIS_REQUEST_TIMEOUT_MS = 90_000;
/** The longest answer read from the model; more is a runaway reply, not an analysis. */
const MAX_ANSWER_CHARS = 64_000;
const MAX_ANSWER_TOKENS = 2_000;

/** A failure that no retry can mend (the stored config is unusable, the call is gone). */
export class PermanentAnalysisError extends Error {
  readonly retryable = false;
}

/**
 * Runs one post-call analysis: reads the call's transcript and tool calls, asks the analysis LLM
 * (through the organization's keys and the outbound guard), validates the structured data against
 * the tenant's schema (compiled with the tools' bounded compiler: RE2 patterns, size limits), asks
 * once more with the validation errors when the answer is wrong, and returns what it got, counted
 * in tokens. Storing it is the worker's job.
 */
@Injectable()
export class CallAnalysisRunner {
  constructor(
    private readonly calls: CallRepository,
    private readonly engines: AgentEngines,
  ) {}

  async run(job: ClaimedAnalysis): Promise<AnalysisResult> {
    const parsed = AnalysisConfigSchema.safeParse(job.config);
    if (!parsed.success) throw new PermanentAnalysisError(`the stored analysis config is not valid: ${parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ')}`);
    const config = parsed.data;
    const validator = this.structuredDataValidator(config);
    const call = await this.calls.findDetail(job.organizationId, job.callId);
    if (!call) throw new PermanentAnalysisError('the call no longer exists');
    const llmConfig = config.llm;
    if (!llmConfig) throw new PermanentAnalysisError('the analysis has no LLM settings');
    const llm = await this.engines.analysisLlm(llmConfig, job.organizationId);

    const messages = analysisMessages(config, call);
    const tokens = { input: 0, output: 0 };
    const first = await this.ask(llm, job.callId, messages, tokens);
    let read = readAnswer(first, config, validator);
    if (read.problems.length > 0) {
      // Once more, with what was wrong: models mend a schema violation they are shown.
      read = keepBest(read, readAnswer(await this.ask(llm, job.callId, correctionMessages(messages, first, read.problems), tokens), config, validator));
    }
    return {
      summary: read.summary,
      structuredData: validator ? read.structuredData : null,
      structuredDataErrors: validator && read.structuredDataProblems.length > 0 ? read.structuredDataProblems : null,
      success: read.success,
      successReason: read.successReason,
      model: llmConfig.model,
      inputTokens: tokens.input,
      outputTokens: tokens.output,
    };
  }

  private structuredDataValidator(config: AnalysisConfig): ArgumentValidator | undefined {
    if (!config.structuredData) return undefined;
    const compiled = compileToolSchema(config.structuredData);
    // Checked when the config was saved; a config stored before that rule is refused here, saying why.
    if (!compiled.ok) throw new PermanentAnalysisError(`analysis.structuredData is not a usable JSON Schema: ${describeSchemaProblems(compiled.problems)}`);
    return compiled.validator;
  }

  private async ask(llm: LlmEngine, callId: string, messages: ChatMessage[], tokens: { input: number; output: number }): Promise<string> {
    let text = '';
    for await (const event of llm.stream({ callId, messages, temperature: 0, maxTokens: MAX_ANSWER_TOKENS, signal: AbortSignal.timeout(ANALYSIS_REQUEST_TIMEOUT_MS) })) {
      if (event.type === 'text') {
        text += event.delta;
        if (text.length > MAX_ANSWER_CHARS) break;
      } else if (event.type === 'done' && event.usage) {
        // Clamped as a live call's usage is: a provider's negative or NaN count charges nothing.
        tokens.input += Math.round(countableUsage(event.usage.inputTokens));
        tokens.output += Math.round(countableUsage(event.usage.outputTokens));
      }
    }
    return text;
  }
}

/** After the retry: its answer, but a field the first answer got right and the retry lost is kept. */
function keepBest(first: ReadAnswer, second: ReadAnswer): ReadAnswer {
  return {
    ...second,
    summary: second.summary ?? first.summary,
    success: second.success ?? first.success,
    successReason: second.successReason ?? first.successReason,
  };
}

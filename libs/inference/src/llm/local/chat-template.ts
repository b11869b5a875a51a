import { Template } from '@huggingface/jinja';
import { EngineError } from '../../contracts';
import type { ChatMessage, ToolDefinition } from '../llm-engine';
import type { ChatTemplateSource } from './llm-model-folder';
import { QWEN_TOOL_CALL_MARKUP, type ToolCallMarkup } from './tool-call-stream-parser';
import { templateConversation, templateTools } from './chat-template-messages';

const TOOL_NAME_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
const PROBE_TOOL = 'switchboard_probe_tool';

/**
 * A model's own Jinja chat template (tokenizer_config.json or chat_template.jinja), rendered with
 * @huggingface/jinja the way transformers' apply_chat_template renders it (add_generation_prompt,
 * the tokenizer's bos/eos text, tools in the OpenAI function schema). The prompt the model reads
 * is then the one it was trained on, whatever its family, and nothing here guesses a format.
 *
 * Safe to run in the server process on every LLM turn: templates come only from model folders an
 * operator pulled (never from a tenant); Jinja has no while loop, so a render's work is the
 * template's own `for` loops over the conversation (plus any `range` or macro its author wrote);
 * and a conversation's text is data the template prints, never template source. Each turn renders
 * once (LocalOnnxLlm.generate); load parses once and renders two probe conversations.
 */
export class ModelChatTemplate {
  private constructor(
    private readonly engine: string,
    private readonly source: ChatTemplateSource,
    private readonly plain: Template,
    private readonly withTools: Template,
    private readonly tokens: { bos_token?: string; eos_token?: string },
    /** Whether tool definitions reach the prompt: the template renders something for them. */
    readonly rendersTools: boolean,
    /** The markup the template writes tool calls in, so replies are parsed in the same format. */
    readonly toolCallMarkup: ToolCallMarkup | undefined,
  ) {}

  /** Parses the template and learns from what it emits whether, and how, it does tool calls. */
  static load(engine: string, folder: string, source: ChatTemplateSource | undefined, tokens: { bos_token?: string; eos_token?: string }): ModelChatTemplate {
    if (source === undefined || source.text.trim() === '') {
      throw new EngineError(
        engine,
        'model_missing',
        `${engine}: ${folder} has no chat template (no "chat_template" in tokenizer_config.json and no chat_template.jinja); ` +
          "the local LLM engine renders prompts only from the model's own template, so a chat model export is needed",
        false,
      );
    }
    const plain = parseTemplate(engine, source, source.text);
    const withTools = source.toolUseText === undefined ? plain : parseTemplate(engine, source, source.toolUseText);
    const probe = (template: Template, messages: readonly Record<string, unknown>[], tools?: readonly Record<string, unknown>[]): string | undefined => {
      try {
        return template.render({ messages, ...(tools ? { tools } : {}), add_generation_prompt: true, ...tokens });
      } catch {
        return undefined; // a template that raises on this shape does not do tools
      }
    };
    const user = { role: 'user', content: 'probe' };
    const tool = templateTools([{ name: PROBE_TOOL, description: 'probe', parameters: { type: 'object', properties: {} } }]);
    // The probe tool's name reaches the prompt only if the template writes the definitions out.
    const rendersTools = probe(withTools, [user], tool)?.includes(PROBE_TOOL) ?? false;
    const call = { role: 'assistant', content: '', tool_calls: [{ id: 'probe', type: 'function', function: { name: PROBE_TOOL, arguments: {} } }] };
    const withCall = probe(withTools, [user, call], tool) ?? '';
    // Hermes-style calls (Qwen2.5, Qwen3, Hermes and their fine-tunes): `<tool_call>{"name": ...}</tool_call>`.
    const hermes = new RegExp(`<tool_call>\\s*\\{\\s*"name":\\s*"${PROBE_TOOL}"[^]*?</tool_call>`).test(withCall);
    return new ModelChatTemplate(engine, source, plain, withTools, tokens, rendersTools, hermes ? QWEN_TOOL_CALL_MARKUP : undefined);
  }

  /** The prompt text for this conversation, the generation prompt included. */
  render(messages: readonly ChatMessage[], tools: readonly ToolDefinition[] = []): string {
    this.validate(messages, tools);
    const template = tools.length > 0 ? this.withTools : this.plain;
    try {
      return template.render({
        messages: templateConversation(messages),
        ...(tools.length > 0 ? { tools: templateTools(tools) } : {}),
        add_generation_prompt: true,
        ...this.tokens,
      });
    } catch (cause) {
      // raise_exception in the template (roles that must alternate, say) or a shape it cannot print.
      const detail = cause instanceof Error ? cause.message : String(cause);
      throw new EngineError(this.engine, 'bad_request', `${this.engine}: the model's chat template (${this.source.file}) refused this conversation: ${detail}`, false, { cause });
    }
  }

  private validate(messages: readonly ChatMessage[], tools: readonly ToolDefinition[]): void {
    if (!Array.isArray(messages) || messages.length === 0) throw this.badRequest('a chat request needs at least one message');
    messages.forEach((message, position) => {
      if (!['system', 'user', 'assistant', 'tool'].includes(message.role)) throw this.badRequest(`message ${position} has unknown role "${String(message.role)}"`);
      const content = message.content as unknown;
      if (typeof content !== 'string' && !(message.role === 'assistant' && content === null)) {
        throw this.badRequest(`message ${position} (${message.role}) content must be a string`);
      }
      const usesTools = message.role === 'tool' || (message.role === 'assistant' && (message.tool_calls?.length ?? 0) > 0);
      if (usesTools) this.requireToolSupport(`message ${position} is a tool call or result`);
    });
    if (tools.length > 0) this.requireToolSupport('tools were given');
    for (const tool of tools) {
      if (!TOOL_NAME_PATTERN.test(tool.name)) throw this.badRequest(`tool name "${tool.name}" must be 1-64 letters, digits, '_' or '-'`);
    }
  }

  private requireToolSupport(what: string): void {
    if (!this.rendersTools) throw this.badRequest(`${what}, but this model's chat template (${this.source.file}) has no tool support`);
    if (this.toolCallMarkup === undefined) {
      throw this.badRequest(`${what}, but this model's chat template (${this.source.file}) writes tool calls in a format the local engine does not parse (it parses <tool_call>{json}</tool_call>)`);
    }
  }

  private badRequest(detail: string): EngineError {
    return new EngineError(this.engine, 'bad_request', `${this.engine}: ${detail}`, false);
  }
}

function parseTemplate(engine: string, source: ChatTemplateSource, text: string): Template {
  try {
    return new Template(text);
  } catch (cause) {
    const detail = cause instanceof Error ? cause.message : String(cause);
    throw new EngineError(engine, 'model_missing', `${engine}: the chat template in ${source.file} does not parse: ${detail}`, false, { cause });
  }
}

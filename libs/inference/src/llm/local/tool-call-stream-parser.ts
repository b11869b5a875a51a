import { EngineError } from '../../contracts';

export type ToolCallParserOutput = { type: 'text'; delta: string } | { type: 'tool_call'; name: string; arguments: string };

export interface ToolCallMarkup {
  open: string;
  close: string;
}

/** Qwen2.5 / Hermes-style tool calls: `<tool_call>{"name": ..., "arguments": {...}}</tool_call>`. */
export const QWEN_TOOL_CALL_MARKUP: ToolCallMarkup = { open: '<tool_call>', close: '</tool_call>' };

/**
 * Splits a streamed reply into text deltas and tool calls. Text outside the markup streams as it
 * comes, except what might still be the start of an opening tag (held until it is known not to
 * be) and whitespace next to a tool call (the newlines models put around the markup would
 * otherwise reach the speech synthesizer as empty deltas). The markup itself never appears as text.
 */
export class ToolCallStreamParser {
  private buffer = '';
  private insideCall = false;
  private afterCall = false;
  private calls = 0;

  constructor(
    private readonly engine: string,
    /** null: the model's template has no tool-call format, so every character is text. */
    private readonly markup: ToolCallMarkup | null = QWEN_TOOL_CALL_MARKUP,
    /** Whether a malformed call may come out well on a repeat (sampling), for the error's flag. */
    private readonly retryableWhenMalformed = false,
  ) {}

  get toolCallCount(): number {
    return this.calls;
  }

  push(text: string): ToolCallParserOutput[] {
    const outputs: ToolCallParserOutput[] = [];
    const markup = this.markup;
    if (markup === null) {
      this.emitText(text, outputs);
      return outputs;
    }
    this.buffer += text;
    for (;;) {
      if (this.insideCall) {
        const close = this.buffer.indexOf(markup.close);
        if (close < 0) return outputs;
        outputs.push(this.parseCall(this.buffer.slice(0, close)));
        this.buffer = this.buffer.slice(close + markup.close.length);
        this.insideCall = false;
        this.afterCall = true;
        continue;
      }
      if (this.afterCall) {
        this.buffer = this.buffer.trimStart();
        if (this.buffer === '') return outputs;
        this.afterCall = false;
      }
      const open = this.buffer.indexOf(markup.open);
      if (open >= 0) {
        // Whitespace just before the markup is layout, not speech.
        this.emitText(this.buffer.slice(0, open).trimEnd(), outputs);
        this.buffer = this.buffer.slice(open + markup.open.length);
        this.insideCall = true;
        continue;
      }
      const partial = partialTagLength(this.buffer, markup.open);
      const held = partial + trailingWhitespaceLength(this.buffer.slice(0, this.buffer.length - partial));
      this.emitText(this.buffer.slice(0, this.buffer.length - held), outputs);
      this.buffer = this.buffer.slice(this.buffer.length - held);
      return outputs;
    }
  }

  /**
   * The reply ended. A call whose closing tag never came (models sometimes stop right after the
   * JSON) still counts when its JSON is complete; otherwise the reply is malformed.
   */
  end(): ToolCallParserOutput[] {
    const outputs: ToolCallParserOutput[] = [];
    if (this.insideCall) {
      outputs.push(this.parseCall(this.buffer));
    } else {
      // Plain replies keep their text as written; next to tool calls, edge whitespace is layout.
      this.emitText(this.calls === 0 ? this.buffer : this.buffer.trim(), outputs);
    }
    this.buffer = '';
    this.insideCall = false;
    return outputs;
  }

  private emitText(text: string, outputs: ToolCallParserOutput[]): void {
    if (text !== '') outputs.push({ type: 'text', delta: text });
  }

  private parseCall(body: string): ToolCallParserOutput {
    let parsed: unknown;
    try {
      parsed = JSON.parse(body.trim());
    } catch {
      throw this.malformed(`a tool call that is not JSON: ${body.trim().slice(0, 120)}`);
    }
    const call = (typeof parsed === 'object' && parsed !== null ? parsed : {}) as { name?: unknown; arguments?: unknown; parameters?: unknown };
    if (typeof call.name !== 'string' || call.name === '') throw this.malformed(`a tool call without a name: ${body.trim().slice(0, 120)}`);
    // Qwen writes arguments as an object; some fine-tunes use `parameters` or a JSON string.
    const args = call.arguments ?? call.parameters ?? {};
    this.calls += 1;
    return { type: 'tool_call', name: call.name, arguments: typeof args === 'string' ? args : JSON.stringify(args) };
  }

  private malformed(detail: string): EngineError {
    return new EngineError(this.engine, 'malformed_response', `${this.engine}: the model produced ${detail}`, this.retryableWhenMalformed);
  }
}

/** Length of the longest suffix of `text` that is a proper prefix of `tag`. */
function partialTagLength(text: string, tag: string): number {
  for (let length = Math.min(tag.length - 1, text.length); length > 0; length--) {
    if (text.endsWith(tag.slice(0, length))) return length;
  }
  return 0;
}

function trailingWhitespaceLength(text: string): number {
  return text.length - text.trimEnd().length;
}

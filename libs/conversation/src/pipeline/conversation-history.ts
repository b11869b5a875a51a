import type { ChatMessage, ToolCall } from '@switchboard/inference';

/**
 * The chat history the LLM sees. Assistant text is added as the caller *heard* it (barge-in
 * truncates it), and tool calls are added together with their results so the history is always
 * valid for OpenAI-compatible servers (an assistant tool_calls message must be followed by one
 * tool message per call).
 */
export class ConversationHistory {
  private readonly messages: ChatMessage[] = [];

  constructor(systemPrompt: string) {
    if (systemPrompt.trim().length > 0) this.messages.push({ role: 'system', content: systemPrompt });
  }

  /** An independent copy (a speculative reply writes to its own until it is adopted). */
  fork(): ConversationHistory {
    const copy = new ConversationHistory('');
    copy.messages.push(...this.messages.map((message) => ({ ...message })));
    return copy;
  }

  /** A copy, so a request in flight is not changed by later turns. */
  snapshot(): ChatMessage[] {
    return this.messages.slice();
  }

  /**
   * Adds what the caller said. Two user messages in a row (the caller went on talking before the
   * agent answered) are merged, as the model should answer them together.
   */
  addUser(text: string): void {
    const last = this.messages.at(-1);
    // Replaced, not changed in place: snapshots already handed out share the message objects.
    if (last?.role === 'user') this.messages[this.messages.length - 1] = { ...last, content: `${last.content} ${text}` };
    else this.messages.push({ role: 'user', content: text });
  }

  addAssistant(text: string): void {
    if (text.trim().length === 0) return;
    this.messages.push({ role: 'assistant', content: text });
  }

  addToolRound(spokenText: string, calls: ToolCall[], results: { toolCallId: string; content: string }[]): void {
    this.messages.push({ role: 'assistant', content: spokenText.trim().length > 0 ? spokenText : null, tool_calls: calls });
    for (const result of results) this.messages.push({ role: 'tool', tool_call_id: result.toolCallId, content: result.content });
  }

  get length(): number {
    return this.messages.length;
  }
}

import type { FakeChatReply, FakeToolCall } from './fake-openai-types';

/**
 * The SSE events of a streamed Chat Completion, shaped like OpenAI's: a role chunk, content
 * deltas, tool-call deltas (id and name first, then the argument text in pieces), a finish chunk,
 * an optional usage chunk with empty choices, and `[DONE]`.
 */
export function chatCompletionEvents(reply: FakeChatReply, options: { model: string; includeUsage: boolean }): string[] {
  const id = 'chatcmpl-fake';
  const created = Math.floor(Date.now() / 1000);
  const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) =>
    sseData(JSON.stringify({ id, object: 'chat.completion.chunk', created, model: options.model, choices, ...extra }));
  const delta = (value: Record<string, unknown>, finishReason: string | null = null) => chunk([{ index: 0, delta: value, logprobs: null, finish_reason: finishReason }]);

  const events = [delta({ role: 'assistant', content: '' })];
  for (const text of reply.text ?? []) events.push(delta({ content: text }));
  for (const toolDelta of toolCallDeltas(reply.toolCalls ?? [], reply.interleaveToolCalls ?? false)) events.push(delta({ tool_calls: [toolDelta] }));
  const toolCallCount = reply.toolCalls?.length ?? 0;
  events.push(delta({}, reply.finishReason ?? (toolCallCount > 0 ? 'tool_calls' : 'stop')));
  if (options.includeUsage && reply.usage !== undefined) {
    const { promptTokens, completionTokens, cachedTokens = 0 } = reply.usage;
    events.push(
      chunk([], {
        usage: {
          prompt_tokens: promptTokens,
          completion_tokens: completionTokens,
          total_tokens: promptTokens + completionTokens,
          prompt_tokens_details: { cached_tokens: cachedTokens },
        },
      }),
    );
  }
  if (!reply.omitDone) events.push(sseData('[DONE]'));
  return events;
}

export function sseData(data: string): string {
  return `data: ${data}\n\n`;
}

function toolCallDeltas(toolCalls: FakeToolCall[], interleave: boolean): Array<Record<string, unknown>> {
  const perCall = toolCalls.map((call, index) => [
    { index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } },
    ...splitInto(call.arguments, call.argumentPieces ?? 3).map((piece) => ({ index, function: { arguments: piece } })),
  ]);
  if (!interleave) return perCall.flat();
  const deltas: Array<Record<string, unknown>> = [];
  for (let step = 0; perCall.some((deltasOfCall) => step < deltasOfCall.length); step++) {
    for (const deltasOfCall of perCall) {
      const next = deltasOfCall[step];
      if (next !== undefined) deltas.push(next);
    }
  }
  return deltas;
}

/** `text` in `pieces` nearly equal parts (fewer when the text is shorter). */
function splitInto(text: string, pieces: number): string[] {
  const count = Math.max(1, Math.min(pieces, text.length));
  const size = Math.ceil(text.length / count);
  const parts: string[] = [];
  for (let start = 0; start < text.length; start += size) parts.push(text.slice(start, start + size));
  return parts;
}

import { chatCompletionEvents } from '@switchboard/testing';
import { EngineError } from '../contracts';
import { ChatStreamAssembler, type ChatStreamOutput } from './chat-stream-assembler';

const encoder = new TextEncoder();

function assemble(pieces: Uint8Array[]): ChatStreamOutput[] {
  const assembler = new ChatStreamAssembler('test-llm');
  const outputs = pieces.flatMap((piece) => assembler.push(piece));
  return [...outputs, ...assembler.end()];
}

const sse = (...chunks: unknown[]) => encoder.encode(chunks.map((chunk) => `data: ${typeof chunk === 'string' ? chunk : JSON.stringify(chunk)}\n\n`).join(''));
const delta = (value: Record<string, unknown>, finishReason: string | null = null) => ({ choices: [{ index: 0, delta: value, finish_reason: finishReason }] });

describe('ChatStreamAssembler', () => {
  // A reply with text, two tool calls whose argument deltas interleave, usage, keep-alive comments
  // and non-ASCII text: scripted by the same code the fake server streams.
  const stream = encoder.encode(
    chatCompletionEvents(
      {
        text: ['Let me ', 'check that f\u00fcr you \u2014 ', 'one moment.'],
        toolCalls: [
          { id: 'call_a', name: 'lookup_order', arguments: '{"orderId":"A-1001","verbose":true}', argumentPieces: 4 },
          { id: 'call_b', name: 'get_weather', arguments: '{"city":"Z\u00fcrich"}', argumentPieces: 3 },
        ],
        interleaveToolCalls: true,
        usage: { promptTokens: 321, completionTokens: 45, cachedTokens: 256 },
      },
      { model: 'gpt-test', includeUsage: true },
    )
      .flatMap((event) => [': keep-alive\n\n', event])
      .join(''),
  );
  const expected: ChatStreamOutput[] = [
    { type: 'text', delta: 'Let me ' },
    { type: 'text', delta: 'check that f\u00fcr you \u2014 ' },
    { type: 'text', delta: 'one moment.' },
    { type: 'tool_call', id: 'call_a', name: 'lookup_order', arguments: '{"orderId":"A-1001","verbose":true}' },
    { type: 'tool_call', id: 'call_b', name: 'get_weather', arguments: '{"city":"Z\u00fcrich"}' },
    { type: 'finished', finishReason: 'tool_calls', usage: { inputTokens: 321, cachedInputTokens: 256, outputTokens: 45 } },
  ];

  it('assembles text deltas, parallel tool calls from indexed pieces, the finish reason and usage', () => {
    expect(assemble([stream])).toEqual(expected);
  });

  it('gives the same result whichever byte the stream is split at', () => {
    const want = JSON.stringify(expected);
    const mismatchedCuts: number[] = [];
    for (let cut = 1; cut < stream.length; cut++) {
      if (JSON.stringify(assemble([stream.subarray(0, cut), stream.subarray(cut)])) !== want) mismatchedCuts.push(cut);
    }
    expect(stream.length).toBeGreaterThan(2000);
    expect(mismatchedCuts).toEqual([]);
  });

  it('gives the same result when bytes arrive one at a time', () => {
    expect(assemble(Array.from(stream, (_, i) => stream.subarray(i, i + 1)))).toEqual(expected);
  });

  it('reports usage as null when the server sent none, and accepts a stream without [DONE] once finished', () => {
    const bytes = sse(delta({ content: 'Hi' }), delta({}, 'stop'));
    expect(assemble([bytes])).toEqual([
      { type: 'text', delta: 'Hi' },
      { type: 'finished', finishReason: 'stop', usage: null },
    ]);
  });

  it('assembles tool calls from servers that leave out the index (older Ollama)', () => {
    const bytes = sse(
      delta({ tool_calls: [{ id: 'call_1', function: { name: 'transfer_call', arguments: '{"to":"sales"}' } }] }),
      delta({ tool_calls: [{ id: 'call_2', function: { name: 'end_call', arguments: '' } }] }),
      delta({}, 'tool_calls'),
      '[DONE]',
    );
    expect(assemble([bytes])).toEqual([
      { type: 'tool_call', id: 'call_1', name: 'transfer_call', arguments: '{"to":"sales"}' },
      // A function without parameters: '' means '{}'.
      { type: 'tool_call', id: 'call_2', name: 'end_call', arguments: '{}' },
      { type: 'finished', finishReason: 'tool_calls', usage: null },
    ]);
  });

  it('fails with a retryable error when the body ends before the reply finished', () => {
    const run = () => assemble([sse(delta({ content: 'Hal' }))]);
    expect(run).toThrow(EngineError);
    expect(run).toThrow(expect.objectContaining({ code: 'unavailable', retryable: true }));
  });

  it('fails with malformed_response (not retryable) on a chunk that is not JSON', () => {
    const run = () => assemble([encoder.encode('data: {"choices":[{"delta":{"content":"Hel\n\n')]);
    expect(run).toThrow(expect.objectContaining({ code: 'malformed_response', retryable: false }));
  });

  it('fails with malformed_response on a tool call without a function name', () => {
    const run = () => assemble([sse(delta({ tool_calls: [{ index: 0, id: 'c', function: { arguments: '{}' } }] }), delta({}, 'tool_calls'))]);
    expect(run).toThrow(expect.objectContaining({ code: 'malformed_response' }));
  });

  it('turns an error chunk in the stream into an EngineError by its code', () => {
    expect(() => assemble([sse({ error: { message: 'overloaded', code: 503 } })])).toThrow(expect.objectContaining({ code: 'unavailable', retryable: true }));
    expect(() => assemble([sse({ error: { message: 'context too long', code: 400 } })])).toThrow(expect.objectContaining({ code: 'bad_request', retryable: false }));
  });

  it('ignores everything after [DONE]', () => {
    const bytes = sse(delta({ content: 'a' }), delta({}, 'stop'), '[DONE]', delta({ content: 'late' }));
    expect(assemble([bytes]).map((output) => output.type)).toEqual(['text', 'finished']);
  });
});

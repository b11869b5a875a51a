import { EngineError } from '../../contracts';
import { ToolCallStreamParser, type ToolCallParserOutput } from './tool-call-stream-parser';

/** Feeds the text in pieces of `size` characters and collects every output, end included. */
function parse(text: string, size: number, parser = new ToolCallStreamParser('llm')): ToolCallParserOutput[] {
  const outputs: ToolCallParserOutput[] = [];
  for (let i = 0; i < text.length; i += size) outputs.push(...parser.push(text.slice(i, i + size)));
  outputs.push(...parser.end());
  return outputs;
}

const textOf = (outputs: ToolCallParserOutput[]): string => outputs.map((output) => (output.type === 'text' ? output.delta : '')).join('');
const callsOf = (outputs: ToolCallParserOutput[]) => outputs.filter((output) => output.type === 'tool_call');

describe('ToolCallStreamParser (Qwen <tool_call> spans)', () => {
  const reply =
    'Let me check.\n<tool_call>\n{"name": "lookup_order", "arguments": {"order_id": "4567"}}\n</tool_call>\n' +
    '<tool_call>\n{"name": "get_time", "arguments": {}}\n</tool_call>';

  it.each([1, 3, 7, 1000])('finds every call whatever the piece size (%i chars), without markup in the text', (size) => {
    const outputs = parse(reply, size);
    expect(textOf(outputs)).toBe('Let me check.');
    expect(callsOf(outputs)).toEqual([
      { type: 'tool_call', name: 'lookup_order', arguments: '{"order_id":"4567"}' },
      { type: 'tool_call', name: 'get_time', arguments: '{}' },
    ]);
  });

  it('streams plain text as it comes, holding back only a possible tag start', () => {
    const parser = new ToolCallStreamParser('llm');
    expect(parser.push('Hello there')).toEqual([{ type: 'text', delta: 'Hello there' }]);
    expect(parser.push(', I <tool')).toEqual([{ type: 'text', delta: ', I' }]);
    expect(parser.push('box> is fine')).toEqual([{ type: 'text', delta: ' <toolbox> is fine' }]);
    expect(parser.end()).toEqual([]);
    expect(parser.toolCallCount).toBe(0);
  });

  it('keeps the text of a plain reply exactly, trailing newline and a dangling "<" included', () => {
    expect(textOf(parse('Two lines\nof text\n', 4))).toBe('Two lines\nof text\n');
    expect(textOf(parse('a < b', 1))).toBe('a < b');
  });

  it('accepts a call whose closing tag never came when its JSON is complete, and string arguments', () => {
    expect(callsOf(parse('<tool_call>\n{"name": "hang_up", "arguments": "{\\"reason\\": \\"done\\"}"}\n', 5))).toEqual([
      { type: 'tool_call', name: 'hang_up', arguments: '{"reason": "done"}' },
    ]);
  });

  it('fails with malformed_response on a call that is not JSON or has no name (retryable when sampling)', () => {
    expect(() => parse('<tool_call>{"name": "x", "arguments": {</tool_call>', 4)).toThrow(/not JSON/);
    expect(() => parse('<tool_call>{"arguments": {}}</tool_call>', 4)).toThrow(/without a name/);
    try {
      parse('<tool_call>{oops', 100, new ToolCallStreamParser('llm', undefined, true));
      throw new Error('expected a failure');
    } catch (error) {
      expect(error).toBeInstanceOf(EngineError);
      expect(error).toMatchObject({ code: 'malformed_response', retryable: true });
    }
  });

  it('passes every character through as text when the template has no tool-call markup (null)', () => {
    const outputs = parse(reply, 5, new ToolCallStreamParser('llm', null));
    expect(callsOf(outputs)).toEqual([]);
    expect(textOf(outputs)).toBe(reply);
  });
});

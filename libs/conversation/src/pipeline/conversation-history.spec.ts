import type { ToolCall } from '@switchboard/inference';
import { ConversationHistory } from './conversation-history';

const lookup: ToolCall = { id: 'call_1', type: 'function', function: { name: 'lookup_order', arguments: '{"orderId":"123456"}' } };
const hours: ToolCall = { id: 'call_2', type: 'function', function: { name: 'opening_hours', arguments: '{}' } };

describe('ConversationHistory', () => {
  it('starts with the system prompt, or with nothing when it is blank', () => {
    expect(new ConversationHistory('Be brief.').snapshot()).toEqual([{ role: 'system', content: 'Be brief.' }]);
    expect(new ConversationHistory('  \n').snapshot()).toEqual([]);
  });

  it('merges consecutive user messages into one, so the model answers them together', () => {
    const history = new ConversationHistory('Be brief.');
    history.addUser('I need to change');
    history.addUser('my delivery address.');
    expect(history.snapshot()).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'I need to change my delivery address.' },
    ]);
    history.addAssistant('Sure.');
    history.addUser('Thanks.');
    expect(history.length).toBe(4);
  });

  it('leaves out blank assistant text (a reply cut before anything was heard)', () => {
    const history = new ConversationHistory('');
    history.addUser('Hello?');
    history.addAssistant('   ');
    history.addAssistant('');
    expect(history.snapshot()).toEqual([{ role: 'user', content: 'Hello?' }]);
  });

  it('adds a tool round as one assistant tool_calls message followed by one tool message per call', () => {
    const history = new ConversationHistory('');
    history.addUser('Where is order 123456, and when are you open?');
    history.addToolRound('Let me check.', [lookup, hours], [
      { toolCallId: 'call_1', content: '{"result":{"status":"shipped"}}' },
      { toolCallId: 'call_2', content: '{"result":"9 to 5"}' },
    ]);
    history.addToolRound('  ', [hours], [{ toolCallId: 'call_2', content: '{"error":"timeout"}' }]);
    const messages = history.snapshot();
    expect(messages.slice(1)).toEqual([
      { role: 'assistant', content: 'Let me check.', tool_calls: [lookup, hours] },
      { role: 'tool', tool_call_id: 'call_1', content: '{"result":{"status":"shipped"}}' },
      { role: 'tool', tool_call_id: 'call_2', content: '{"result":"9 to 5"}' },
      // Nothing spoken before the call: content null, as the OpenAI API expects.
      { role: 'assistant', content: null, tool_calls: [hours] },
      { role: 'tool', tool_call_id: 'call_2', content: '{"error":"timeout"}' },
    ]);
    // Valid for OpenAI-compatible servers: every tool_call id is answered by the tool messages right after it.
    messages.forEach((message, at) => {
      if (message.role !== 'assistant' || !message.tool_calls) return;
      const answers = messages.slice(at + 1, at + 1 + message.tool_calls.length);
      expect(answers.map((answer) => (answer.role === 'tool' ? answer.tool_call_id : answer.role))).toEqual(message.tool_calls.map((call) => call.id));
    });
  });

  it('does not merge a user message into a tool message', () => {
    const history = new ConversationHistory('');
    history.addToolRound('', [lookup], [{ toolCallId: 'call_1', content: '{}' }]);
    history.addUser('And?');
    expect(history.snapshot().at(-1)).toEqual({ role: 'user', content: 'And?' });
  });

  it('forks an independent copy: neither side sees what the other adds or merges', () => {
    const history = new ConversationHistory('Be brief.');
    history.addUser('What time do you');
    const fork = history.fork();
    fork.addUser('open?');
    fork.addAssistant('At nine.');
    history.addUser('close?');
    expect(fork.snapshot()).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'What time do you open?' },
      { role: 'assistant', content: 'At nine.' },
    ]);
    expect(history.snapshot()).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'What time do you close?' },
    ]);
  });

  it('hands out snapshots that later turns do not change (a request in flight keeps what it was sent)', () => {
    const history = new ConversationHistory('');
    history.addUser('What time do you');
    const inFlight = history.snapshot();
    history.addUser('close?');
    history.addAssistant('At five.');
    expect(inFlight).toEqual([{ role: 'user', content: 'What time do you' }]);
  });
});

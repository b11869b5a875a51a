import { EndCallToolSchema, TransferCallToolSchema } from '@switchboard/agent-config';
import { endCallTool, MAX_TRANSFER_SUMMARY_CHARS, transferCallTool } from './built-in-tools';

describe('end_call', () => {
  const tool = endCallTool(EndCallToolSchema.parse({ type: 'end_call', goodbye: 'Thanks, bye!' }));

  it('asks the runtime to hang up with the configured goodbye, keeping the reason', () => {
    const outcome = tool.run({ id: 'tc_1', name: 'end_call', arguments: '{"reason":"caller said goodbye"}' });
    expect(outcome).toEqual({
      content: '{"result":{"ending":true,"reason":"caller said goodbye"}}',
      result: { ending: true, reason: 'caller said goodbye' },
      action: { type: 'end_call', goodbye: 'Thanks, bye!' },
    });
  });

  it('still hangs up when the model sends no or unreadable arguments', () => {
    expect(tool.run({ id: 'tc_1', name: 'end_call', arguments: '' }).action).toEqual({ type: 'end_call', goodbye: 'Thanks, bye!' });
    expect(tool.run({ id: 'tc_2', name: 'end_call', arguments: '{"reason":' }).action.type).toBe('end_call');
  });

  it('describes when to use it, with an optional reason parameter', () => {
    expect(tool.definition.name).toBe('end_call');
    expect(tool.definition.description).toMatch(/only when the conversation is clearly over/);
    expect(tool.definition.parameters).toMatchObject({ type: 'object', properties: { reason: { type: 'string' } } });
    expect(tool.definition.parameters).not.toHaveProperty('required');
  });

  it('uses the configured description and default goodbye', () => {
    const custom = endCallTool(EndCallToolSchema.parse({ type: 'end_call', description: 'Hang up when done.' }));
    expect(custom.definition.description).toBe('Hang up when done.');
    expect(custom.run({ id: 'tc_1', name: 'end_call', arguments: '{}' }).action).toEqual({
      type: 'end_call',
      goodbye: 'Thank you for calling. Goodbye.',
    });
  });
});

describe('transfer_call', () => {
  const tool = transferCallTool(
    TransferCallToolSchema.parse({
      type: 'transfer_call',
      destinations: [{ number: '+15550002000', label: 'Sales' }, { number: '+15550003000' }],
    }),
  );

  it('offers exactly the configured numbers, with their labels, to the model', () => {
    expect(tool.definition.parameters).toEqual({
      type: 'object',
      properties: {
        destination: {
          type: 'string',
          enum: ['+15550002000', '+15550003000'],
          description: 'The number to transfer to, one of: +15550002000 (Sales), +15550003000.',
        },
      },
      required: ['destination'],
      additionalProperties: false,
    });
    expect(tool.definition.description).toMatch(/asks for a human[\s\S]*Destinations: \+15550002000 \(Sales\), \+15550003000\.$/);
  });

  it('asks the runtime to say the message and transfer to a listed number', () => {
    expect(tool.run({ id: 'tc_1', name: 'transfer_call', arguments: '{"destination":"+15550002000"}' })).toEqual({
      content: '{"result":{"transferring":true,"to":"+15550002000"}}',
      result: { transferring: true, to: '+15550002000' },
      action: { type: 'transfer', to: '+15550002000', message: 'Please hold while I transfer your call.' },
    });
  });

  it('refuses an unlisted number, a missing destination and broken JSON, with no action', () => {
    const unlisted = tool.run({ id: 'tc_1', name: 'transfer_call', arguments: '{"destination":"+19005551234"}' });
    expect(unlisted).toEqual({
      content: JSON.stringify({ error: unlisted.error }),
      error: '"+19005551234" is not an allowed destination; use one of +15550002000 (Sales), +15550003000',
      action: { type: 'none' },
    });
    expect(tool.run({ id: 'tc_2', name: 'transfer_call', arguments: '{}' })).toMatchObject({
      error: '"destination" is required: one of +15550002000 (Sales), +15550003000',
      action: { type: 'none' },
    });
    expect(tool.run({ id: 'tc_3', name: 'transfer_call', arguments: '{"destination"' }).action).toEqual({ type: 'none' });
  });
});

describe('transfer_call with a warm destination', () => {
  const tool = transferCallTool(
    TransferCallToolSchema.parse({
      type: 'transfer_call',
      destinations: [
        { number: '+15550002000', label: 'Sales' },
        { number: '+15550004000', label: 'Billing', mode: 'warm', holdMusicUrl: 'https://music.example.com/hold.mp3', answerTimeoutS: 45 },
      ],
    }),
  );

  it('asks the model for a summary, which only a warm transfer uses', () => {
    expect(tool.definition.parameters).toMatchObject({
      properties: { destination: { enum: ['+15550002000', '+15550004000'] }, summary: { type: 'string', maxLength: MAX_TRANSFER_SUMMARY_CHARS } },
      required: ['destination'],
    });
  });

  it('asks the runtime to say the hold message and hand the call over warm, with the model\'s summary, its spaces folded', () => {
    const outcome = tool.run({ id: 'tc_1', name: 'transfer_call', arguments: JSON.stringify({ destination: '+15550004000', summary: '  Ada   wants a refund.\n' }) });
    expect(outcome.result).toEqual({ transferring: true, to: '+15550004000', mode: 'warm' });
    expect(outcome.action).toEqual({
      type: 'transfer',
      to: '+15550004000',
      message: 'Please hold while I connect you.',
      warm: { holdMusicUrl: 'https://music.example.com/hold.mp3', whisper: 'summary', answerTimeoutS: 45, summary: 'Ada wants a refund.' },
    });
  });

  it('bounds the summary whatever the model wrote, and goes without one', () => {
    const long = tool.run({ id: 'tc_1', name: 'transfer_call', arguments: JSON.stringify({ destination: '+15550004000', summary: 'x'.repeat(5000) }) });
    expect(long.action.type === 'transfer' && long.action.warm?.summary?.length).toBe(MAX_TRANSFER_SUMMARY_CHARS);
    const none = tool.run({ id: 'tc_2', name: 'transfer_call', arguments: JSON.stringify({ destination: '+15550004000', summary: 42 }) });
    expect(none.action.type === 'transfer' && none.action.warm).toEqual({ holdMusicUrl: 'https://music.example.com/hold.mp3', whisper: 'summary', answerTimeoutS: 45 });
  });

  it('keeps a cold destination of the same tool exactly as before (no summary passed on)', () => {
    expect(tool.run({ id: 'tc_1', name: 'transfer_call', arguments: JSON.stringify({ destination: '+15550002000', summary: 'ignored' }) }).action).toEqual({
      type: 'transfer',
      to: '+15550002000',
      message: 'Please hold while I transfer your call.',
    });
  });
});

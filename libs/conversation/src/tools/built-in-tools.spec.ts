import { EndCallToolSchema, TransferCallToolSchema } from '../config/agent-config.schema';
import { endCallTool, transferCallTool } from './built-in-tools';

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

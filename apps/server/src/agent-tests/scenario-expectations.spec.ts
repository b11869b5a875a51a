import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CallDetail } from '@switchboard/persistence';
import { judgeScenario } from './scenario-expectations';
import { callerTurn, scenarioSuite, type CallerTurn } from './scenario-suite.schema';

const turn = (input: object): CallerTurn => callerTurn.parse(input);

function call(input: Partial<CallDetail>): CallDetail {
  return { endReason: 'stream_stopped', transcript: [], toolInvocations: [], events: [], ...input } as CallDetail;
}

const said = (role: 'user' | 'assistant', text: string, startMs: number, heardText: string | null = null) =>
  ({ role, source: role === 'user' ? 'speech' : 'speech', text, heardText, interrupted: heardText !== null, startMs, endMs: startMs + 500 }) as CallDetail['transcript'][number];

describe('judgeScenario', () => {
  it('gives each turn what happened between its start and the next turn\'s', () => {
    const outcome = judgeScenario(
      [turn({ say: 'hours?', expect: { replyIncludes: ['Nine'] } }), turn({ say: 'thanks', expect: { replyExcludes: ['nine'] } })],
      [{ startMs: 1000 }, { startMs: 5000 }],
      call({ transcript: [said('assistant', 'Welcome, nine lives', 0), said('user', 'hours?', 1100), said('assistant', 'We open at nine.', 2000), said('user', 'thanks', 5100), said('assistant', 'Bye.', 6000)] }),
    );
    expect(outcome.passed).toBe(true);
    expect(outcome.turns.map((result) => [result.heard, result.reply])).toEqual([
      ['hours?', 'We open at nine.'],
      ['thanks', 'Bye.'],
    ]);
  });

  it('judges an interrupted reply by what the caller heard of it', () => {
    const outcome = judgeScenario([turn({ say: 'x', expect: { replyIncludes: ['tomorrow'] } })], [{ startMs: 0 }], call({ transcript: [said('assistant', 'We open tomorrow at nine', 100, 'We open')] }));
    expect(outcome.turns[0]!.failures).toEqual(['reply does not include "tomorrow" (reply: "We open")']);
  });

  it('checks tool calls by name and by arguments against a JSON Schema', () => {
    const schema = { type: 'object', required: ['date'], properties: { date: { type: 'string', pattern: '^2026-' } } };
    const expectTool = turn({ say: 'book', expect: { toolCalls: [{ name: 'book', arguments: schema }, { name: 'lookup' }] } });
    const tools = (args: object) => [{ name: 'book', arguments: args, error: null, startedAtMs: 50 }] as unknown as CallDetail['toolInvocations'];
    expect(judgeScenario([expectTool], [{ startMs: 0 }], call({ toolInvocations: tools({ date: '2026-01-02' }) })).turns[0]!.failures).toEqual(['tool lookup was not called (called: book)']);
    const wrong = judgeScenario([expectTool], [{ startMs: 0 }], call({ toolInvocations: tools({ date: '2025-01-02' }) })).turns[0]!.failures;
    expect(wrong[0]).toMatch(/^tool book was called, but arguments do not match the tool's parameters: .*date.*\(arguments: \{"date":"2025-01-02"\}\)$/);
  });

  it('checks the end of the call and transfers, and fails the turns never reached', () => {
    const turns = [turn({ say: 'bye', expect: { endsCall: true } }), turn({ say: 'still there?' })];
    const ended = judgeScenario(turns, [{ startMs: 0 }], call({ endReason: 'agent_hangup' }));
    expect(ended.turns.map((result) => result.failures)).toEqual([[], ['not reached: the call ended (agent_hangup) before this turn']]);

    const notEnded = judgeScenario([turn({ say: 'bye', expect: { endsCall: true } }), turn({ say: 'more' })], [{ startMs: 0 }, { startMs: 4000 }], call({}));
    expect(notEnded.turns[0]!.failures).toEqual(['the agent did not end the call: the conversation went on']);

    const transfer = turn({ say: 'a person', expect: { transfer: { to: '+15550001111' } } });
    const event = (to: string) => [{ type: 'call_transferred', offsetMs: 300, payload: { to } }] as unknown as CallDetail['events'];
    expect(judgeScenario([transfer], [{ startMs: 0 }], call({ events: event('+15550001111') })).passed).toBe(true);
    expect(judgeScenario([transfer], [{ startMs: 0 }], call({ events: event('+15559999999') })).turns[0]!.failures).toEqual(['transferred to +15559999999, not +15550001111']);
    expect(judgeScenario([transfer], [{ startMs: 0 }], call({})).turns[0]!.failures).toEqual(['no transfer to +15550001111']);
  });

  it('a turn gives exactly one of say and wavBase64', () => {
    expect(callerTurn.safeParse({ say: 'a', wavBase64: 'UklGRg==' }).success).toBe(false);
    expect(callerTurn.safeParse({}).success).toBe(false);
    expect(callerTurn.safeParse({ wavBase64: 'not base64!' }).success).toBe(false);
  });

  it('accepts the README\'s example suite', () => {
    const example: unknown = JSON.parse(readFileSync(join(__dirname, '../../../../examples/tests/front-desk.suite.json'), 'utf8'));
    expect(scenarioSuite.parse(example).scenarios).toHaveLength(3);
  });
});

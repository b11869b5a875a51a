import { parseAgentsCommand } from './agents-options';
import { formatRunReport } from './scenario-report';

describe('agents test: command line and report', () => {
  it('reads the server and key from options or the environment, and refuses a run without a key', () => {
    expect(parseAgentsCommand(['test', 'agent-1', 'suite.json'], { SWITCHBOARD_API_KEY: 'sk_x' })).toEqual({ kind: 'test', agentId: 'agent-1', suitePath: 'suite.json', url: 'http://localhost:3000', apiKey: 'sk_x' });
    expect(parseAgentsCommand(['test', 'agent-1', 'suite.json', '--url', 'https://sb.example.com/', '--api-key', 'sk_y'], {})).toMatchObject({ url: 'https://sb.example.com', apiKey: 'sk_y' });
    expect(() => parseAgentsCommand(['test', 'agent-1', 'suite.json'], {})).toThrow('--api-key or SWITCHBOARD_API_KEY');
    expect(() => parseAgentsCommand(['test', 'agent-1'], { SWITCHBOARD_API_KEY: 'k' })).toThrow('the agent id and the suite file');
  });

  it('prints a line per scenario and, for failed turns, what was said, heard and replied', () => {
    const lines = formatRunReport({
      id: 'run-1',
      suiteName: 'desk',
      agentConfigVersion: 3,
      status: 'failed',
      error: null,
      scenarioCount: 2,
      results: [
        { scenario: 'ok', passed: true, callId: 'c1', error: null, turns: [{ said: 'hi', heard: 'hi', reply: 'hello', failures: [] }] },
        { scenario: 'bad', passed: false, callId: 'c2', error: null, turns: [{ said: 'hours?', heard: 'hours', reply: '', failures: ['reply does not include "nine" (reply: nothing)'] }] },
      ],
    });
    expect(lines).toEqual([
      'suite "desk" (agent config version 3), run run-1',
      'PASS  ok  (call c1)',
      'FAIL  bad  (call c2)',
      '      turn 1: "hours?"',
      '        heard: hours',
      '        reply: (nothing)',
      '        x reply does not include "nine" (reply: nothing)',
      '1 of 2 scenarios passed',
    ]);
  });
});

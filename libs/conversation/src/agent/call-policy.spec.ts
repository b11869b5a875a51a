import { parseAgentConfig } from '@switchboard/agent-config';
import { InMemoryConversationRecorder } from '../records/conversation-records';
import type { CallControl } from '../call/call-control';
import type { AgentCallContext } from './agent-session';
import { CallPolicy, MAX_CONSECUTIVE_FAILURES } from './call-policy';

/** The policy alone, over an agent that only writes down what it was asked to do. */
function policyUnderTest(options: { callControl?: Partial<CallControl>; busy?: () => boolean } = {}) {
  const recorder = new InMemoryConversationRecorder();
  const said: string[] = [];
  const endReasons: string[] = [];
  const hangUps: string[] = [];
  let cuts = 0;
  const config = parseAgentConfig({ firstMessage: null, maxDurationS: 60, idle: { promptAfterMs: 5000, maxPrompts: 2, prompt: 'Still there?', goodbye: 'Goodbye.' } });
  const context = {
    callId: 'call-1',
    recorder,
    callControl: { hangUp: async (reason: string) => void hangUps.push(reason), transfer: async () => undefined, ...options.callControl },
    endCall: (reason: string) => endReasons.push(reason),
  } as unknown as AgentCallContext;
  const policy: CallPolicy = new CallPolicy(context, config, {
    isBusy: options.busy ?? (() => false),
    say: (text, source) => void said.push(`${source}: ${text}`),
    sayThenHangUp: async (text, reason) => {
      said.push(`closing: ${text}`);
      await policy.hangUp(reason);
    },
    cutSpeech: () => void (cuts += 1),
  });
  return { policy, recorder, said, endReasons, hangUps, cuts: () => cuts, config };
}

describe('CallPolicy (shared by the pipeline and realtime agents)', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('prompts after promptAfterMs of silence, maxPrompts times, then says goodbye and hangs up', async () => {
    const c = policyUnderTest();
    c.policy.armIdle();
    await jest.advanceTimersByTimeAsync(4999);
    expect(c.said).toEqual([]);
    await jest.advanceTimersByTimeAsync(1);
    expect(c.said).toEqual(['idle_prompt: Still there?']);
    c.policy.armIdle();
    await jest.advanceTimersByTimeAsync(5000);
    c.policy.armIdle();
    await jest.advanceTimersByTimeAsync(5000);
    expect(c.said).toEqual(['idle_prompt: Still there?', 'idle_prompt: Still there?', 'closing: Goodbye.']);
    expect(c.recorder.events).toEqual([{ type: 'idle_timeout', payload: { prompts: 2 } }]);
    expect(c.hangUps).toEqual(['idle_timeout']);
    expect(c.endReasons).toEqual(['idle_timeout']);
    expect(c.policy.ending).toBe(true);
  });

  it('counts the prompts again after the caller speaks, and never prompts over somebody', async () => {
    let busy = false;
    const c = policyUnderTest({ busy: () => busy });
    c.policy.armIdle();
    await jest.advanceTimersByTimeAsync(5000);
    c.policy.callerSpoke();
    c.policy.armIdle();
    await jest.advanceTimersByTimeAsync(5000);
    c.policy.armIdle();
    busy = true;
    await jest.advanceTimersByTimeAsync(5000);
    expect(c.said).toEqual(['idle_prompt: Still there?', 'idle_prompt: Still there?']);
    c.policy.armIdle();
    c.policy.pauseIdle();
    busy = false;
    await jest.advanceTimersByTimeAsync(10_000);
    expect(c.said).toHaveLength(2);
  });

  it('cuts what is playing when the time limit is up (counted from the call start), then says so and hangs up', async () => {
    const c = policyUnderTest();
    c.policy.startMaxDuration(20_000);
    await jest.advanceTimersByTimeAsync(39_999);
    expect(c.cuts()).toBe(0);
    await jest.advanceTimersByTimeAsync(1);
    expect(c.cuts()).toBe(1);
    expect(c.recorder.events[0]).toEqual({ type: 'max_duration_reached', payload: { maxDurationS: 60 } });
    expect(c.said).toEqual([`closing: ${c.config.maxDurationMessage}`]);
    expect(c.endReasons).toEqual(['max_duration']);
  });

  it('apologises for a failed answer, gives up after MAX_CONSECUTIVE_FAILURES in a row, and a working answer resets the count', async () => {
    const c = policyUnderTest();
    await c.policy.answerFailed();
    await c.policy.answerFailed();
    c.policy.answerWorked();
    for (let failure = 1; failure < MAX_CONSECUTIVE_FAILURES; failure++) await c.policy.answerFailed();
    expect(c.said).toEqual(Array.from({ length: 4 }, () => `apology: ${c.config.apologyMessage}`));
    expect(c.endReasons).toEqual([]);
    await c.policy.answerFailed();
    expect(c.recorder.events).toEqual([{ type: 'agent_gave_up', payload: { consecutiveFailures: 3 } }]);
    expect(c.endReasons).toEqual(['agent_error']);
  });

  it('transfers, or says it could not and goes on; a failed hang-up still ends the call', async () => {
    const refused = policyUnderTest({ callControl: { transfer: async () => Promise.reject(new Error('the carrier said no')) } });
    await refused.policy.transfer('+15550009999');
    expect(refused.recorder.events).toEqual([{ type: 'transfer_failed', payload: { to: '+15550009999', message: 'the carrier said no' } }]);
    expect(refused.said).toEqual(["apology: Sorry, I couldn't transfer your call right now."]);
    expect(refused.policy.ending).toBe(false);

    const transferred = policyUnderTest();
    await transferred.policy.transfer('+15550009999');
    expect(transferred.recorder.events).toEqual([{ type: 'call_transferred', payload: { to: '+15550009999' } }]);
    expect(transferred.endReasons).toEqual(['transferred']);

    const unreachable = policyUnderTest({ callControl: { hangUp: async () => Promise.reject(new Error('timeout')) } });
    await unreachable.policy.hangUp('agent_hangup');
    expect(unreachable.recorder.events).toEqual([{ type: 'hangup_failed', payload: { message: 'timeout' } }]);
    expect(unreachable.endReasons).toEqual(['agent_hangup']);
  });

  it('hands a warm transfer to the call control and ends its stream as a hand-off; says so when the edge cannot', async () => {
    const requests: unknown[] = [];
    const warm = policyUnderTest({ callControl: { warmTransfer: async (request) => void requests.push(request) } });
    await warm.policy.transfer('+15550009999', { whisper: 'summary', answerTimeoutS: 30, summary: 'Wants billing.' });
    expect(requests).toEqual([{ to: '+15550009999', whisper: 'summary', answerTimeoutS: 30, summary: 'Wants billing.' }]);
    // The server records the transfer's steps itself: nothing here, and the edge suspends the call rather than end it.
    expect(warm.recorder.events).toEqual([]);
    expect(warm.endReasons).toEqual(['transfer_hold']);

    const webCall = policyUnderTest();
    await webCall.policy.transfer('+15550009999', { whisper: 'none', answerTimeoutS: 30 });
    expect(webCall.recorder.events).toEqual([
      { type: 'transfer_failed', payload: { to: '+15550009999', mode: 'warm', message: 'a warm transfer needs a phone call (the carrier holds the caller in a conference)' } },
    ]);
    expect(webCall.said).toEqual(["apology: Sorry, I couldn't transfer your call right now."]);
    expect(webCall.endReasons).toEqual([]);
  });

  it('does nothing once closed', async () => {
    const c = policyUnderTest();
    c.policy.armIdle();
    c.policy.startMaxDuration(0);
    c.policy.close();
    await jest.advanceTimersByTimeAsync(120_000);
    await c.policy.answerFailed();
    await c.policy.hangUp('agent_hangup');
    expect({ said: c.said, events: c.recorder.events, ends: c.endReasons }).toEqual({ said: [], events: [], ends: [] });
  });
});

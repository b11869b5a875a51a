/**
 * The realtime agent's first message when the caller speaks first (libs/testing/src/conversation/realtime-call.ts).
 * The model is asked for it as the call starts and its audio plays when it comes, over a caller
 * already talking if need be (the platform cannot hold back a response the model is generating);
 * barge-in then cuts it, keeping what was heard. Either way it reaches the transcript, and a greeting
 * the model never began saying before the call ended is recorded as heard by nobody.
 */
import { settle } from '@switchboard/testing';
import { useRealtimeCalls } from '../../../testing/src/conversation/realtime-call';

const GREETING = 'Hello, thanks for calling Acme.';

describe('RealtimeAgentSession: the first message when the caller speaks first', () => {
  const startCall = useRealtimeCalls();

  it('asks the model for it at once, and records it cut with what was heard when the caller talks over it', async () => {
    const c = await startCall({ config: { firstMessage: GREETING } });
    expect(c.model.responseRequests).toEqual([`Say exactly this, and nothing else: "${GREETING}"`]);
    c.model.speechStarted();
    await c.talk(300);
    // The greeting's audio comes while the caller is still talking.
    await c.modelSpeaks('resp-1', 20, GREETING);
    c.output.echoPlayed(1);
    await c.talk(600);
    expect(c.eventsOf('barge_in')).toHaveLength(1);
    expect(c.recorder.turns).toEqual([expect.objectContaining({ role: 'assistant', source: 'first_message', text: GREETING, interrupted: true })]);
  });

  it('plays it in full when it comes after the caller stopped', async () => {
    const c = await startCall({ config: { firstMessage: GREETING } });
    c.model.speechStarted();
    await c.talk(300);
    await c.pause(600);
    c.model.speechStopped();
    await c.modelSpeaks('resp-1', 5, GREETING);
    c.model.done('resp-1');
    c.output.echoPlayed();
    await settle();
    expect(c.recorder.turns).toEqual([expect.objectContaining({ role: 'assistant', source: 'first_message', text: GREETING, interrupted: false })]);
  });

  it('records a greeting the model never began saying as heard by nobody when the call ends', async () => {
    const c = await startCall({ config: { firstMessage: GREETING } });
    c.model.speechStarted();
    await c.talk(300);
    c.session.close('caller_hangup');
    await settle();
    expect(c.recorder.turns).toEqual([expect.objectContaining({ role: 'assistant', source: 'first_message', text: GREETING, heardText: '', interrupted: true })]);
    expect(c.eventsOf('assistant_turn_cut')).toEqual([{ index: 0, why: 'call_ended' }]);
  });
});

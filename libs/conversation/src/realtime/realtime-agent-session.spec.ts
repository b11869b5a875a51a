/**
 * A realtime call on scripted parts (libs/testing/src/conversation/realtime-call.ts): barge-in judged by the
 * platform's VAD, the call without that VAD, and the caller's audio while the model connects.
 */
import { ScriptedVad, gate, settle } from '@switchboard/testing';
import { FailingVad, useRealtimeCalls } from '../../../testing/src/conversation/realtime-call';
import { ScriptedSpeechEngine } from '@switchboard/testing';
import { EngineError } from '@switchboard/inference';

describe('RealtimeAgentSession', () => {
  const startCall = useRealtimeCalls();

  describe('barge-in, judged by the platform VAD on the caller audio', () => {
    it('cuts the answer once the caller has talked over it for minSpeechMs: clear, cancel, truncate at what was heard', async () => {
      const c = await startCall();
      await c.modelSpeaks('resp-1', 20);
      // The caller has heard 1.25 s (5 marks: one every 250 ms of audio, inside the 100 ms chunks' run).
      c.output.echoPlayed(5);
      await settle();

      await c.talk(300);
      expect(c.output.clears).toBe(0);
      await c.talk(200);
      expect(c.output.clears).toBe(1);
      expect(c.model.cancels).toBe(1);
      expect(c.model.truncations).toEqual([{ itemId: 'resp-1-item', audioEndMs: 1250 }]);
      const [bargeIn] = c.eventsOf('barge_in');
      // 1.25 s of the 2 s sent: 62.5 % of the words, cut at a word boundary.
      expect(bargeIn).toMatchObject({ cause: 'speech', itemId: 'resp-1-item', heardMs: 1250, heardText: 'We open at nine and' });
      // Both ends of the decision are on the call clock: speech start, then the frame that completed minSpeechMs.
      expect(bargeIn!['decisionFrameMs']).toBeGreaterThan(bargeIn!['speechStartMs'] as number);
      expect(c.recorder.turns).toEqual([expect.objectContaining({ role: 'assistant', interrupted: true, heardText: 'We open at nine and' })]);
      // The cut answer keeps its waterfall, with when it was cut; the model decided the turn, so no frame of ours ended it.
      expect(c.recorder.latencies).toEqual([expect.objectContaining({ turnIndex: 0, endOfTurnFrameMs: null, interruptedAtMs: expect.any(Number) })]);
      expect(c.recorder.latencies[0]!.interruptedAtMs).toBeGreaterThanOrEqual(c.recorder.latencies[0]!.firstFrameSentMs as number);
      // The model's own VAD was never needed.
      expect(c.vadRequests).toBe(1);
    });

    it('lets a short "uh-huh" over the agent pass as a backchannel, whatever the model VAD says', async () => {
      const c = await startCall();
      await c.modelSpeaks('resp-1', 20);
      // The model's VAD hears the caller start, and would say they stopped only after its silence window.
      c.model.speechStarted();
      await c.talk(200);
      await c.pause(600);
      c.model.speechStopped();
      await settle();

      expect(c.output.clears).toBe(0);
      expect(c.model.cancels).toBe(0);
      expect(c.model.truncations).toEqual([]);
      expect(c.eventsOf('barge_in')).toEqual([]);
      const [backchannel] = c.eventsOf('backchannel_ignored');
      expect(backchannel).toMatchObject({ judgedBy: 'local_vad' });
      expect(backchannel!['speechMs']).toBeLessThan(400);
      expect(c.eventsOf('backchannel_ignored')).toHaveLength(1);
    });

    it('does nothing when the caller talks while the agent is silent', async () => {
      const c = await startCall();
      await c.talk(1000);
      await c.modelSpeaks('resp-1', 5);
      await c.pause(100);
      expect(c.output.clears).toBe(0);
      expect(c.eventsOf('barge_in')).toEqual([]);
      expect(c.eventsOf('backchannel_ignored')).toEqual([]);
    });

    it('stops listening once the answer has been heard in full', async () => {
      const c = await startCall();
      await c.modelSpeaks('resp-1', 3);
      c.model.done('resp-1');
      c.output.echoPlayed();
      await settle();
      expect(c.recorder.turns).toEqual([expect.objectContaining({ role: 'assistant', interrupted: false })]);
      expect(c.recorder.latencies).toEqual([expect.objectContaining({ interruptedAtMs: null })]);

      await c.talk(800);
      expect(c.output.clears).toBe(0);
      expect(c.model.cancels).toBe(0);
    });

    it('judges the audio that arrived while the VAD was still being created, once it is there', async () => {
      const vadReady = gate();
      const vad = new ScriptedVad('call-1');
      const c = await startCall({ vad: async () => vadReady.opened.then(() => vad) });
      await c.modelSpeaks('resp-1', 20);
      await c.talk(500);
      expect(c.output.clears).toBe(0);

      vadReady.open();
      await settle();
      expect(c.output.clears).toBe(1);
      expect(c.eventsOf('barge_in')).toEqual([expect.objectContaining({ cause: 'speech' })]);
      expect(c.eventsOf('local_vad_unavailable')).toEqual([]);
    });

    it('neither creates a VAD nor interrupts when interruptions are off', async () => {
      const c = await startCall({ config: { interruptions: { enabled: false } } });
      await c.modelSpeaks('resp-1', 20);
      c.model.speechStarted();
      await c.talk(1000);
      expect(c.vadRequests).toBe(0);
      expect(c.output.clears).toBe(0);
      expect(c.model.cancels).toBe(0);
    });
  });

  describe('without the platform VAD', () => {
    it('runs the call on the model speech events when the VAD cannot be created', async () => {
      const c = await startCall({ vad: () => Promise.reject(new Error('model file missing')) });
      expect(c.eventsOf('local_vad_unavailable')).toEqual([{ stage: 'create', message: 'model file missing' }]);
      await c.modelSpeaks('resp-1', 20);

      // Speech the model says stopped before minSpeechMs is a backchannel.
      c.model.speechStarted();
      await c.wait(200);
      c.model.speechStopped();
      await c.wait(400);
      expect(c.output.clears).toBe(0);
      expect(c.eventsOf('backchannel_ignored')).toEqual([expect.objectContaining({ judgedBy: 'model_vad', speechMs: 200 })]);

      // Speech that goes on for minSpeechMs interrupts.
      c.model.speechStarted();
      await c.wait(399);
      expect(c.output.clears).toBe(0);
      await c.wait(1);
      expect(c.output.clears).toBe(1);
      expect(c.model.cancels).toBe(1);
      expect(c.eventsOf('barge_in')).toEqual([expect.objectContaining({ cause: 'speech', decisionFrameMs: null })]);
      expect(c.endReasons).toEqual([]);
    });

    it('falls back to the model speech events when the VAD fails mid-call, and the call goes on', async () => {
      const failing = new FailingVad('call-1');
      const c = await startCall({ vad: async () => failing });
      await c.talk(100);
      expect(c.eventsOf('local_vad_unavailable')).toEqual([{ stage: 'push', message: 'inference runtime closed' }]);
      expect(failing.closed).toBe(true);
      expect(c.endReasons).toEqual([]);

      await c.modelSpeaks('resp-1', 20);
      c.model.speechStarted();
      await c.wait(400);
      expect(c.output.clears).toBe(1);
    });
  });

  describe('while the model connects', () => {
    function slowEngine(): { engine: Promise<ScriptedSpeechEngine>; connect: () => void; model: ScriptedSpeechEngine } {
      let connect: () => void = () => undefined;
      const model = new ScriptedSpeechEngine();
      return { engine: new Promise((resolve) => (connect = () => resolve(model))), connect: () => connect(), model };
    }

    it('holds every frame the caller sends and gives them all to the model once it is there', async () => {
      const slow = slowEngine();
      const c = await startCall({ engine: slow.engine, config: { interruptions: { enabled: false } } });
      await c.talk(2000);
      slow.connect();
      await settle();
      expect(slow.model.sessions[0]?.audioBytesReceived).toBe(100 * 160);
      expect(c.endReasons).toEqual([]);
    });

    it('ends the call, saying why, rather than drop caller audio when the model takes longer than 10 s of it', async () => {
      const slow = slowEngine();
      const c = await startCall({ engine: slow.engine, config: { interruptions: { enabled: false } } });
      await c.talk(10_000);
      expect(c.endReasons).toEqual([]);
      await c.talk(20);
      expect(c.endReasons).toEqual(['agent_error']);
      expect(c.eventsOf('error')).toEqual([expect.objectContaining({ code: 'realtime_connect_slow' })]);
    });

    it("ends the call when the model cannot be reached: the error event's code says what failed, engineCode why", async () => {
      const refused = new ScriptedSpeechEngine();
      refused.connect = () => Promise.reject(new EngineError('openai-realtime', 'unavailable', 'connect ECONNREFUSED 127.0.0.1:9', true));
      const c = await startCall({ engine: Promise.resolve(refused) });
      await settle();
      expect(c.endReasons).toEqual(['agent_error']);
      expect(c.eventsOf('error')).toEqual([
        { code: 'realtime_connect_failed', engineCode: 'unavailable', engine: 'openai-realtime', message: 'connect ECONNREFUSED 127.0.0.1:9', retryable: true },
      ]);
    });
  });
});

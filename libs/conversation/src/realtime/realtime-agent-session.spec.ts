/**
 * A realtime call on scripted parts: the model is a scripted speech-to-speech session the test
 * plays, the caller's audio goes through a loudness VAD (Silero's 32 ms framing) into the real
 * interruption logic, and Twilio's playback buffer is a fake output whose marks the test echoes.
 * Time is Jest's fake clock: 20 ms of caller audio per 20 ms.
 */
import { encodeMulaw } from '@switchboard/audio';
import type { VadStream } from '@switchboard/inference';
import type { AgentCallContext } from '../agent/agent-session';
import type { AgentConfigInput } from '../config/agent-config.schema';
import { parseAgentConfig } from '../config/parse-agent-config';
import { callerFrame, FakeAudioOutput, FakeCallControl, gate, ScriptedSpeechEngine, type ScriptedSpeechSession, ScriptedVad, settle } from '@switchboard/testing';
import { InMemoryConversationRecorder } from '../records/conversation-records';
import type { ToolInvocation, ToolOutcome, ToolRunner } from '../tools/tool-contracts';
import { succeeded } from '../tools/tool-outcome';
import { RealtimeAgentSession } from './realtime-agent-session';

const FILLER = 'One moment while I look that up.';

/** One webhook-like tool with a filler line, answering when the test opens its gate. */
class SlowLookupTool implements ToolRunner {
  readonly definitions = [{ name: 'lookup_order', description: 'Finds an order', parameters: { type: 'object', properties: {} } }];
  readonly runs: ToolInvocation[] = [];
  private readonly answer = gate();

  fillerFor(name: string): string | undefined {
    return name === 'lookup_order' ? FILLER : undefined;
  }

  async run(call: ToolInvocation): Promise<ToolOutcome> {
    this.runs.push(call);
    await this.answer.opened;
    return succeeded({ status: 'shipped' });
  }

  finish(): void {
    this.answer.open();
  }
}

/** A VAD whose every push fails (the inference runtime went away mid-call). */
class FailingVad extends ScriptedVad {
  override failure = new Error('inference runtime closed');
}

interface CallOptions {
  config?: AgentConfigInput;
  /** The model's engine; defaults to one that connects at once. */
  engine?: Promise<ScriptedSpeechEngine>;
  /** The call's VAD; a rejection stands for a VAD that could not be loaded. */
  vad?: () => Promise<VadStream>;
  tools?: ToolRunner;
}

class CallUnderTest {
  readonly engine = new ScriptedSpeechEngine();
  readonly output = new FakeAudioOutput();
  readonly recorder = new InMemoryConversationRecorder();
  readonly callControl = new FakeCallControl();
  readonly endReasons: string[] = [];
  readonly vad = new ScriptedVad('call-1');
  vadRequests = 0;
  readonly session: RealtimeAgentSession;

  constructor(options: CallOptions = {}) {
    const config = parseAgentConfig({ firstMessage: null, ...options.config });
    const context: AgentCallContext = {
      callId: 'call-1',
      organizationId: 'org-1',
      agentId: 'agent-1',
      agentConfigVersion: 1,
      config,
      streamParameters: {},
      callerNumber: '+15550001111',
      calledNumber: '+15550002222',
      callStartedAt: new Date(),
      recorder: this.recorder,
      callControl: this.callControl,
      endCall: (reason) => this.endReasons.push(reason),
    };
    const tools: ToolRunner = options.tools ?? { definitions: [], fillerFor: () => undefined, run: async () => succeeded(null) };
    this.session = new RealtimeAgentSession(context, config, this.output, {
      tools,
      engine: options.engine ?? Promise.resolve(this.engine),
      createVad: () => {
        this.vadRequests += 1;
        return options.vad ? options.vad() : Promise.resolve(this.vad);
      },
    });
    this.output.connect((name, cleared) => this.session.onMarkEchoed(name, cleared));
  }

  get model(): ScriptedSpeechSession {
    const session = this.engine.sessions[0];
    if (!session) throw new Error('the session never connected to the model');
    return session;
  }

  /** The caller talks (loud audio) or is silent for `ms`, in 20 ms frames that arrive in real time. */
  async audio(loud: boolean, ms: number): Promise<void> {
    for (let at = 0; at < ms; at += 20) {
      await jest.advanceTimersByTimeAsync(20);
      // What the edge hands a mu-law agent: the caller's bytes as they came.
      this.session.pushMulaw(encodeMulaw(callerFrame(loud)));
      await settle();
    }
  }

  talk(ms: number): Promise<void> {
    return this.audio(true, ms);
  }

  pause(ms: number): Promise<void> {
    return this.audio(false, ms);
  }

  async wait(ms: number): Promise<void> {
    await jest.advanceTimersByTimeAsync(ms);
    await settle();
  }

  /** The model answers with `chunks` × 100 ms of audio (still generating: no response_done yet). */
  async modelSpeaks(responseId: string, chunks: number, text = 'We open at nine and close at five.'): Promise<void> {
    this.model.speak(responseId, `${responseId}-item`, chunks);
    this.model.transcript(`${responseId}-item`, text);
    await settle();
  }

  eventsOf(type: string): Record<string, unknown>[] {
    return this.recorder.events.filter((event) => event.type === type).map((event) => event.payload);
  }
}

describe('RealtimeAgentSession', () => {
  let call: CallUnderTest | undefined;

  async function startCall(options: CallOptions = {}): Promise<CallUnderTest> {
    call = new CallUnderTest(options);
    await settle();
    return call;
  }

  beforeEach(() => {
    jest.useFakeTimers({ doNotFake: ['nextTick', 'queueMicrotask'] });
  });

  afterEach(() => {
    call?.session.close('test_over');
    call = undefined;
    jest.useRealTimers();
  });

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
  });

  describe('a slow tool', () => {
    it('says the filler line after a second, then gives the model the result once the filler is generated', async () => {
      const tools = new SlowLookupTool();
      const c = await startCall({ tools });
      c.model.toolCall('resp-1', 'call_1', 'lookup_order');
      c.model.done('resp-1');
      await c.wait(999);
      expect(c.model.responseRequests).toEqual([]);
      await c.wait(1);
      expect(c.model.responseRequests).toEqual([`Say exactly this, and nothing else: "${FILLER}"`]);

      // The result arrives while the filler is still being generated: it waits for the filler's end.
      await c.modelSpeaks('resp-2', 10, FILLER);
      tools.finish();
      await settle();
      expect(c.model.toolResults).toEqual([]);
      c.model.done('resp-2');
      await settle();
      expect(c.model.toolResults).toEqual([{ callId: 'call_1', output: '{"result":{"status":"shipped"}}' }]);

      c.output.echoPlayed();
      await settle();
      expect(c.recorder.turns).toEqual([expect.objectContaining({ role: 'assistant', source: 'tool_filler', text: FILLER, interrupted: false })]);
    });

    it('skips the filler when the model is still answering', async () => {
      const tools = new SlowLookupTool();
      const c = await startCall({ tools });
      // The tool call's response is still being generated a second later.
      c.model.toolCall('resp-1', 'call_1', 'lookup_order');
      await c.wait(1500);
      expect(c.model.responseRequests).toEqual([]);
      expect(c.eventsOf('tool_filler_skipped')).toEqual([{ reason: 'response_active' }]);
      tools.finish();
      await settle();
      expect(c.model.toolResults).toHaveLength(1);
    });

    it('says nothing extra for a tool that answers within a second', async () => {
      const tools = new SlowLookupTool();
      const c = await startCall({ tools });
      c.model.toolCall('resp-1', 'call_1', 'lookup_order');
      c.model.done('resp-1');
      await c.wait(500);
      tools.finish();
      await c.wait(2000);
      expect(c.model.responseRequests).toEqual([]);
      expect(c.model.toolResults).toHaveLength(1);
    });
  });

  describe("the model's audio on the call", () => {
    /** The output's log with consecutive plays folded into one. */
    const shape = (c: CallUnderTest) => c.output.sequence.filter((entry, index, all) => entry !== 'play' || all[index - 1] !== 'play');

    it('passes the mu-law through with a mark every 250 ms inside the chunks, and ends the utterance once the response is done', async () => {
      const c = await startCall();
      // Three 100 ms chunks: the 250 ms mark falls inside the third.
      await c.modelSpeaks('resp-1', 3);
      expect(c.output.playedSamples).toBe(2400);
      expect(shape(c)).toEqual(['play', 'mark:rt1:1', 'play']);
      c.model.done('resp-1');
      await settle();
      expect(shape(c)).toEqual(['play', 'mark:rt1:1', 'play', 'mark:rt1:2', 'end']);
      c.output.echoPlayed();
      await settle();
      expect(c.recorder.turns).toEqual([expect.objectContaining({ role: 'assistant', interrupted: false })]);
    });

    it('does not end the utterance of a response cut by barge-in: the clear discards it', async () => {
      const c = await startCall();
      await c.modelSpeaks('resp-1', 20);
      await c.talk(500);
      expect(c.output.clears).toBe(1);
      c.model.done('resp-1', 'cancelled');
      await settle();
      const afterClear = c.output.sequence.slice(c.output.sequence.indexOf('clear') + 1);
      expect(afterClear.filter((entry) => entry === 'play' || entry === 'end')).toEqual([]);
    });
  });

  describe('a failed response', () => {
    const apology = (message: string): string => `Say exactly this, and nothing else: "${message}"`;

    it('asks the model for the apology, and a working answer ends the run of failures', async () => {
      const c = await startCall({ config: { apologyMessage: 'Sorry, say that again?' } });
      const answer = async (responseId: string, text: string): Promise<void> => {
        await c.modelSpeaks(responseId, 2, text);
        c.model.done(responseId);
        c.output.echoPlayed();
        await settle();
      };
      const fail = async (responseId: string): Promise<void> => {
        c.model.done(responseId, 'failed');
        await settle();
      };

      await fail('resp-1');
      expect(c.model.responseRequests).toEqual([apology('Sorry, say that again?')]);
      expect(c.eventsOf('realtime_response_failed')).toEqual([{ responseId: 'resp-1' }]);
      await answer('resp-2', 'Sorry, say that again?');
      await fail('resp-3');
      await answer('resp-4', 'Sorry, say that again?');
      // The model answers the caller: the run of failures is over.
      await answer('resp-5', 'We open at nine.');
      await fail('resp-6');
      await answer('resp-7', 'Sorry, say that again?');
      await fail('resp-8');

      expect(c.callControl.hangUps).toEqual([]);
      expect(c.model.responseRequests).toHaveLength(4);
      expect(c.recorder.turns.map((turn) => [turn.source, turn.text])).toEqual([
        ['apology', 'Sorry, say that again?'],
        ['apology', 'Sorry, say that again?'],
        ['speech', 'We open at nine.'],
        ['apology', 'Sorry, say that again?'],
      ]);
    });

    it('hangs up with agent_error after three failed responses in a row', async () => {
      const c = await startCall();
      for (const id of ['resp-1', 'resp-2', 'resp-3']) {
        c.model.done(id, 'failed');
        await settle();
      }
      expect(c.model.responseRequests).toHaveLength(2);
      expect(c.eventsOf('agent_gave_up')).toEqual([{ consecutiveFailures: 3 }]);
      expect(c.callControl.hangUps).toEqual(['agent_error']);
      expect(c.endReasons).toEqual(['agent_error']);
    });
  });
});

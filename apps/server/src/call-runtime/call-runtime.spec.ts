import { EventEmitter } from 'node:events';
import type { AgentAudioOutput, AgentCallContext, AgentEngine, AgentSession, ConversationRecorder } from '@switchboard/conversation';
import type { StreamClaim } from '@switchboard/persistence';
import { FakeTwilio } from '@switchboard/testing';
import type { PinoLogger } from 'nestjs-pino';
import type { WebSocket } from 'ws';
import { TwilioMediaStreamTransport } from '../twilio/media-stream/twilio-media-stream-transport';
import type { ConnectionCallEnd } from './call-end-reason';
import { CallRuntime, type CallRuntimeDependencies } from './call-runtime';
import type { CallEventBuffer } from './records/call-event-buffer';

/** The socket as the Twilio transport uses it: messages in, text and a close out. */
class FakeSocket extends EventEmitter {
  readonly OPEN = 1;
  readonly CONNECTING = 0;
  readyState = 1;
  readonly sent: string[] = [];
  closeCode: number | undefined;

  send(text: string): void {
    this.sent.push(text);
  }

  close(code: number): void {
    this.closeCode = code;
    this.readyState = 3;
  }

  receive(text: string): void {
    this.emit('message', Buffer.from(text), false);
  }
}

/** A mu-law agent that logs, in one list, what it was given: each frame's first byte and each key. */
class RecordingAgent implements AgentEngine {
  readonly name = 'recording';
  readonly audio = { inputSampleRate: 8000, outputSampleRate: 8000, inputEncoding: 'mulaw' as const, outputEncoding: 'mulaw' as const };
  readonly log: string[] = [];
  created = 0;
  context: AgentCallContext | undefined;

  createSession(context: AgentCallContext, _output: AgentAudioOutput): AgentSession {
    this.created += 1;
    this.context = context;
    return {
      pushMulaw: (mulaw) => this.log.push(`frame:${mulaw[0]}:${mulaw.length}`),
      onDtmf: (digit) => this.log.push(`key:${digit}`),
      onMarkEchoed: () => undefined,
      onAnsweredBy: (answeredBy) => this.log.push(`answeredBy:${answeredBy}`),
      close: (reason) => this.log.push(`close:${reason}`),
    };
  }
}

function setup(options: Partial<Pick<CallRuntimeDependencies, 'maxInputHeldBeforeAuth' | 'takeCarriedUsage'>> = {}) {
  let settleClaim: (claim: StreamClaim) => void = () => undefined;
  const claim = new Promise<StreamClaim>((resolve) => (settleClaim = resolve));
  const agent = new RecordingAgent();
  const events: { type: string; payload: Record<string, unknown> }[] = [];
  const ends: ConnectionCallEnd[] = [];
  const closed: CallRuntime[] = [];
  const quiet = () => undefined;
  const deps: CallRuntimeDependencies = {
    claimStream: () => claim,
    finaliseCall: async (_callId, end) => {
      ends.push(end);
    },
    resolveAgent: () => agent,
    createEventBuffer: () => ({ add: (type: string, payload: Record<string, unknown>) => events.push({ type, payload }), close: async () => undefined }) as unknown as CallEventBuffer,
    createRecorder: () => ({ transcriptTurn: quiet, toolInvocation: quiet, turnLatency: quiet, event: quiet, flush: async () => undefined }) satisfies ConversationRecorder,
    createCallControl: () => ({ hangUp: async () => undefined, transfer: async () => undefined }),
    usage: { open: quiet, close: () => ({ sttAudioMs: 1500 }) as ReturnType<CallRuntimeDependencies['usage']['close']> },
    logger: { info: quiet, warn: quiet, error: quiet } as unknown as PinoLogger,
    onClosed: (connection) => closed.push(connection),
    ...options,
  };
  const socket = new FakeSocket();
  const logger = deps.logger;
  const connection = new CallRuntime(new TwilioMediaStreamTransport(socket as unknown as WebSocket, logger), deps);
  const twilio = new FakeTwilio();
  socket.receive(twilio.connected());
  socket.receive(twilio.start());
  const authorise = async () => {
    settleClaim({
      outcome: 'ok',
      context: {
        callId: 'call-1',
        organizationId: 'org-1',
        agentId: 'agent-1',
        agentEngine: 'echo',
        agentConfigVersion: 1,
        agentConfig: {},
        twilioCallSid: 'CA1',
        twilioAccountSid: 'AC1',
        fromNumber: '+15550001111',
        toNumber: '+15550002222',
        startedAt: new Date(),
        variables: {},
        answeredBy: null, voicemailMessage: null, testRunId: null, direction: 'inbound',
      },
    });
    await new Promise((resolve) => setImmediate(resolve));
  };
  return { socket, twilio, agent, events, ends, closed, connection, authorise };
}

const frame = (first: number) => new Uint8Array(160).fill(first);

describe('CallRuntime over a Twilio media stream: what the caller sends while the stream token is checked', () => {
  it('holds frames and key presses, then hands them to the agent in the order they came, before live audio', async () => {
    const { socket, twilio, agent, authorise } = setup();
    socket.receive(twilio.media(frame(1)));
    socket.receive(twilio.dtmf('5'));
    socket.receive(twilio.media(frame(2)));
    socket.receive(twilio.media(frame(3)));
    socket.receive(twilio.dtmf('#'));
    expect(agent.created).toBe(0);

    await authorise();
    socket.receive(twilio.media(frame(4)));
    expect(agent.log).toEqual(['frame:1:160', 'key:5', 'frame:2:160', 'frame:3:160', 'key:#', 'frame:4:160']);
    expect(socket.closeCode).toBeUndefined();
  });

  it('ends the call with a protocol error, recorded with its reason, instead of dropping audio past the bound', async () => {
    const { socket, twilio, agent, events, ends, authorise } = setup({ maxInputHeldBeforeAuth: 3 });
    for (const first of [1, 2, 3]) socket.receive(twilio.media(frame(first)));
    expect(socket.closeCode).toBeUndefined();
    socket.receive(twilio.media(frame(4)));
    // 1011: the server could not take the call's audio in time (the caller did nothing wrong).
    expect(socket.closeCode).toBe(1011);

    // The claim lands afterwards: the call is ours, so it is finalised here, with the reason on record.
    await authorise();
    expect(agent.created).toBe(0);
    expect(ends).toEqual([expect.objectContaining({ endReason: 'protocol_error' })]);
    expect(events).toEqual([
      {
        type: 'protocol_error',
        payload: expect.objectContaining({ code: 'held_input_limit', fatal: true, message: expect.stringContaining('3 frames') }),
      },
    ]);
  });
});

describe('CallRuntime over a Twilio media stream: answering-machine verdicts', () => {
  it('keeps a verdict that arrives while the token is checked for the agent, and tells the live agent a later one', async () => {
    const { connection, agent, authorise } = setup();
    // The claim may have read the call before the verdict was stored: the connection remembers it.
    expect(connection.claimedOrClaimingCallId).toBe('call-1');
    connection.noteAnsweredBy('machine_end_beep');
    await authorise();
    expect(agent.context?.answeredBy).toBe('machine_end_beep');

    connection.noteAnsweredBy('machine_end_other');
    expect(agent.context?.answeredBy).toBe('machine_end_other');
    expect(agent.log).toEqual(['answeredBy:machine_end_other']);
  });
});

describe('CallRuntime over a Twilio media stream: a warm transfer hands the call off', () => {
  it('suspends the call when the stream ends while handing off: records flushed, usage handed over, nothing finalised', async () => {
    const { socket, twilio, connection, events, ends, closed, authorise } = setup();
    await authorise();
    const handOff = connection.beginHandOff();
    // Twilio stops the stream once the caller's TwiML is replaced by the hold.
    socket.receive(twilio.stop());
    const usage = await handOff.suspended;
    expect(usage).toMatchObject({ sttAudioMs: 1500, streamMs: expect.any(Number), callerAudioMs: 0 });
    expect(ends).toEqual([]);
    expect(events.find((event) => event.type === 'stream_closed')?.payload).toMatchObject({ reason: 'transfer_hold' });
    expect(closed).toEqual([connection]);
    // Too late to call it off: the transfer (or whoever cancels) must end the call.
    expect(handOff.cancel()).toBe(false);
  });

  it('leaves the call as it was when the hand-off is called off before the stream ended', async () => {
    const { socket, twilio, connection, ends, authorise } = setup();
    await authorise();
    const handOff = connection.beginHandOff();
    expect(handOff.cancel()).toBe(true);
    socket.receive(twilio.stop());
    await new Promise((resolve) => setImmediate(resolve));
    expect(ends).toEqual([expect.objectContaining({ endReason: 'stream_stopped' })]);
  });

  it('finalises normally, with what an earlier stream measured, when no hand-off is under way', async () => {
    const { socket, twilio, ends, authorise } = setup({ takeCarriedUsage: () => ({ sttAudioMs: 500 }) as never });
    await authorise();
    socket.receive(twilio.stop());
    await new Promise((resolve) => setImmediate(resolve));
    expect(ends).toEqual([expect.objectContaining({ endReason: 'stream_stopped', usage: expect.objectContaining({ sttAudioMs: 2000 }) })]);
  });
});

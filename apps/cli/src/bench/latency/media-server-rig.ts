/**
 * The server's media path, as is, on a local WebSocket server: every socket becomes a real
 * CallRuntime over a Twilio media stream transport (protocol session, audio chains, agent session), with in-memory
 * stand-ins for what sits behind it (the call repository, the call-event store, call control).
 * Each call the bench places has a ledger here: its recorder, when `clear` went out, how it ended.
 */
import type { IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { TelephonyAudioInput, TelephonyAudioOutput, type AgentEngine, type CallControl } from '@switchboard/conversation';
import type { CallEventRepository, StreamClaim } from '@switchboard/persistence';
import { hashStreamToken } from '@switchboard/telephony';
import type { PinoLogger } from 'nestjs-pino';
import { pino } from 'pino';
import { WebSocketServer, type WebSocket } from 'ws';
import { CallEventBuffer } from '../../../../server/src/call-runtime/records/call-event-buffer';
import { CallRuntime, type CallRuntimeDependencies } from '../../../../server/src/call-runtime/call-runtime';
import { TwilioMediaStreamTransport } from '../../../../server/src/twilio/media-stream/twilio-media-stream-transport';
import { ObservedRecorder } from './observed-recorder';
import { CallUsageRegistry } from '../../../../server/src/billing/usage-meters/call-usage-registry';

const CLEAR_MESSAGE_PREFIX = '{"event":"clear"';
const MEDIA_PATH = '/media/';

export interface BenchCallLedger {
  callId: string;
  recorder: ObservedRecorder;
  /** performance.now() right after each `clear` was handed to the socket. */
  clearsSentAtMs: number[];
  /** The end reason the connection finalised the call with. */
  finalised: Promise<string>;
}

interface LedgerEntry extends BenchCallLedger {
  tokenHash: string;
  agentConfig: unknown;
  markFinalised(reason: string): void;
}

export class MediaServerRig {
  private readonly ledgers = new Map<string, LedgerEntry>();
  private readonly connections = new Set<CallRuntime>();
  private readonly deps: CallRuntimeDependencies;
  private readonly logger: PinoLogger;

  private constructor(
    private readonly server: WebSocketServer,
    agent: AgentEngine,
  ) {
    const logger = pino({ level: 'silent' }) as unknown as PinoLogger;
    this.logger = logger;
    // The event store the buffer flushes to: the bench keeps no call events beyond the recorder's.
    const callEvents = { appendMany: async (): Promise<void> => undefined } as unknown as CallEventRepository;
    this.deps = {
      claimStream: (input) => this.claim(input),
      finaliseCall: async (callId, end) => {
        this.ledgers.get(callId)?.markFinalised(end.endReason);
      },
      resolveAgent: (name) => (name === agent.name ? agent : undefined),
      createEventBuffer: (callId) => new CallEventBuffer(callId, callEvents, logger),
      createRecorder: (callId) => this.ledger(callId).recorder,
      createCallControl: () => noCallControl,
      usage: new CallUsageRegistry(),
      logger,
      onClosed: (connection) => this.connections.delete(connection),
    };
    server.on('connection', (socket, request) => this.accept(socket, request));
  }

  static async start(agent: AgentEngine): Promise<MediaServerRig> {
    prepareAudioFilters(agent);
    const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await new Promise<void>((resolve, reject) => {
      server.once('listening', resolve);
      server.once('error', reject);
    });
    return new MediaServerRig(server, agent);
  }

  get baseUrl(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** The Stream url a call's TwiML would name; the path tells the rig which ledger the socket belongs to. */
  mediaUrl(callId: string): string {
    return `ws://127.0.0.1:${(this.server.address() as AddressInfo).port}${MEDIA_PATH}${callId}`;
  }

  /** Makes a call known (what the inbound webhook would have stored), with its stream token and agent config. */
  register(callId: string, streamToken: string, agentConfig: unknown): BenchCallLedger {
    let markFinalised: (reason: string) => void = () => undefined;
    const finalised = new Promise<string>((resolve) => (markFinalised = resolve));
    const entry: LedgerEntry = { callId, recorder: new ObservedRecorder(), clearsSentAtMs: [], finalised, tokenHash: hashStreamToken(streamToken), agentConfig, markFinalised };
    this.ledgers.set(callId, entry);
    return entry;
  }

  get activeConnections(): number {
    return this.connections.size;
  }

  /** Ends what is still connected (as a server shutdown does) and stops listening. */
  async close(): Promise<void> {
    await Promise.all([...this.connections].map((connection) => connection.shutdown()));
    for (const client of this.server.clients) client.terminate();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(socket: WebSocket, request: IncomingMessage): void {
    const path = request.url ?? '';
    const ledger = path.startsWith(MEDIA_PATH) ? this.ledgers.get(path.slice(MEDIA_PATH.length)) : undefined;
    if (ledger) timestampClears(socket, ledger.clearsSentAtMs);
    this.connections.add(new CallRuntime(new TwilioMediaStreamTransport(socket, this.logger), this.deps));
  }

  private ledger(callId: string): LedgerEntry {
    const entry = this.ledgers.get(callId);
    if (!entry) throw new Error(`latency bench: no call ${callId} was registered`);
    return entry;
  }

  /** What the call runtime calls at `start`: the token claim, against the bench's own ledger. */
  private async claim(input: { callId: string; tokenHash: string }): Promise<StreamClaim> {
    const entry = this.ledgers.get(input.callId);
    if (!entry) return { outcome: 'missing' };
    if (entry.tokenHash !== input.tokenHash) return { outcome: 'mismatch' };
    return {
      outcome: 'ok',
      context: {
        callId: entry.callId,
        organizationId: 'latency-bench-org',
        agentId: 'latency-bench-agent',
        agentEngine: 'pipeline',
        agentConfigVersion: 1,
        agentConfig: entry.agentConfig as StreamClaimContext['agentConfig'],
        twilioCallSid: `CA-${entry.callId}`,
        twilioAccountSid: 'AC-latency-bench',
        fromNumber: '+15550100001',
        toNumber: '+15550100002',
        startedAt: new Date(),
        variables: {},
        answeredBy: null, voicemailMessage: null, testRunId: null, direction: 'inbound',
      },
    };
  }
}

type StreamClaimContext = Extract<StreamClaim, { outcome: 'ok' }>['context'];

const noCallControl: CallControl = {
  hangUp: async () => undefined,
  transfer: async () => {
    throw new Error('the latency bench has no call control');
  },
};

/** Wraps the socket's send so every `clear` the connection sends is timestamped as it goes out. */
function timestampClears(socket: WebSocket, into: number[]): void {
  const send = socket.send.bind(socket) as (...args: unknown[]) => void;
  (socket as unknown as { send: (...args: unknown[]) => void }).send = (...args: unknown[]) => {
    send(...args);
    if (typeof args[0] === 'string' && args[0].startsWith(CLEAR_MESSAGE_PREFIX)) into.push(performance.now());
  };
}

/** As MediaStreamService.onModuleInit: design the resampling filters before the first call, not during it. */
function prepareAudioFilters(agent: AgentEngine): void {
  const noSink = { sendAudio: (): void => undefined, sendMark: (): void => undefined, endOfUtterance: (): void => undefined, clear: (): void => undefined };
  new TelephonyAudioInput(agent.audio.inputSampleRate);
  new TelephonyAudioOutput(agent.audio.outputSampleRate, noSink);
}

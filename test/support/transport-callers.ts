import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readWav } from '@switchboard/audio';
import type { SimulatedTwilioCall } from '@switchboard/simulated-caller';
import { bindAgent, callTo, speechFixture } from './conversation-agents';
import type { TestServer } from './test-server';
import { WebCallClient } from './web-call-client';

/** 8 kHz mu-law silence: 0xFF is zero amplitude. */
const MULAW_SILENCE = 0xff;
/** 43 characters, as a real token, but not the call's. */
const WRONG_TOKEN = 'x'.repeat(43);

/**
 * A caller on one of the two call transports (Twilio's media stream, the browser's web call),
 * behind one face so a spec can run the same scenario against both: the call is admitted first
 * (dialled, or minted), then its socket is opened and `start` sent with the call's token.
 */
export interface TransportCaller {
  readonly callId: string;
  /** Opens the socket and sends `start` (the server then claims the token). */
  connect(): Promise<void>;
  /** Opens the socket and sends `start` with a token that is not the call's. */
  connectWithWrongToken(): Promise<void>;
  /** Sends a speech fixture in real time, then `trailingSilenceMs` of silence. */
  speak(fixture: 'hours' | 'interrupt', trailingSilenceMs?: number): Promise<void>;
  /** How many of this transport's 20 ms frames a speech fixture fills. */
  speechFrames(fixture: 'hours' | 'interrupt'): number;
  /** Sends `ms` of silence in real time. */
  silence(ms: number): Promise<void>;
  pressKey(digit: string): void;
  /** Audio frames of the agent received so far. */
  framesReceived(): number;
  /** Marks the caller has echoed as played, and `clear`s received. */
  marksPlayed(): number;
  clearsReceived(): number;
  /** The caller hangs up (Twilio's `stop`, the browser's `hangup`); resolves with the socket's close code. */
  hangUp(): Promise<number>;
  /** Resolves with the socket's close code once it has closed (whoever closed it). */
  closed(): Promise<number>;
  /** The carrier's own word that the call is over (Twilio's terminal status callback); absent where the carrier sends none. */
  carrierSaysCompleted?(): Promise<void>;
}

export interface TransportDriver {
  readonly name: 'phone' | 'web';
  /** Admits a call to an agent of `engine` with `config`, not connected yet. */
  admit(server: TestServer, agent: { engine: 'echo' | 'pipeline'; config: object }): Promise<TransportCaller>;
}

export const phoneTransport: TransportDriver = {
  name: 'phone',
  async admit(server, agent) {
    const { number } = await bindAgent(server, agent);
    const call = callTo(server, number);
    const stream = (await call.dial()).stream;
    const callId = stream?.parameters['callId'];
    if (!stream || !callId) throw new Error('the server did not connect a stream');
    return new PhoneCaller(call, callId);
  },
};

export const webTransport: TransportDriver = {
  name: 'web',
  async admit(server, agent) {
    const { agentId } = await bindAgent(server, agent);
    const minted = await server.api(`/v1/agents/${agentId}/web-calls`, { method: 'POST', body: { variables: {} } });
    if (minted.status !== 201) throw new Error(`web call not minted: ${minted.status} ${JSON.stringify(minted.body)}`);
    const { callId, token } = minted.body as { callId: string; token: string };
    return new WebCaller(`${server.serverUrl.replace(/^http/, 'ws')}/v1/web-calls`, callId, token);
  },
};

class PhoneCaller implements TransportCaller {
  constructor(
    private readonly call: SimulatedTwilioCall,
    readonly callId: string,
  ) {}

  connect(): Promise<void> {
    return this.call.connectMedia();
  }

  connectWithWrongToken(): Promise<void> {
    return this.call.connectMedia({ customParameters: { callId: this.callId, token: WRONG_TOKEN } });
  }

  async speak(fixture: 'hours' | 'interrupt', trailingSilenceMs = 0): Promise<void> {
    await this.call.streamAudio(speechFixture(fixture), { trailingSilenceMs });
  }

  speechFrames(fixture: 'hours' | 'interrupt'): number {
    return Math.floor(speechFixture(fixture).length / 160);
  }

  async silence(ms: number): Promise<void> {
    await this.call.streamAudio(new Uint8Array(ms * 8).fill(MULAW_SILENCE));
  }

  pressKey(digit: string): void {
    this.call.sendDtmf(digit);
  }

  framesReceived(): number {
    return this.call.result().latency.framesReceived;
  }

  marksPlayed(): number {
    return this.call.marksEchoed.filter((echo) => echo.reason === 'played').length;
  }

  clearsReceived(): number {
    return this.call.result().latency.clears;
  }

  async hangUp(): Promise<number> {
    return (await this.call.hangup()).code;
  }

  async closed(): Promise<number> {
    return (await this.call.closed).code;
  }

  async carrierSaysCompleted(): Promise<void> {
    const response = await this.call.sendStatusCallback('completed');
    if (response.status !== 204) throw new Error(`status callback answered ${response.status}`);
  }
}

class WebCaller implements TransportCaller {
  private client: WebCallClient | undefined;

  constructor(
    private readonly url: string,
    readonly callId: string,
    private readonly token: string,
  ) {}

  async connect(): Promise<void> {
    (await this.open()).start(this.callId, this.token);
  }

  async connectWithWrongToken(): Promise<void> {
    (await this.open()).start(this.callId, WRONG_TOKEN);
  }

  async speak(fixture: 'hours' | 'interrupt', trailingSilenceMs = 0): Promise<void> {
    await this.socket().stream(speech16k(fixture), trailingSilenceMs);
  }

  speechFrames(fixture: 'hours' | 'interrupt'): number {
    return Math.floor(speech16k(fixture).length / 320);
  }

  async silence(ms: number): Promise<void> {
    await this.socket().stream(new Int16Array(0), ms);
  }

  pressKey(digit: string): void {
    this.socket().sendJson({ type: 'dtmf', digit });
  }

  framesReceived(): number {
    return this.socket().frames.length;
  }

  marksPlayed(): number {
    // The client echoes every mark; those echoed before any clear are the played ones.
    const texts = this.socket().texts;
    const firstClear = texts.findIndex((message) => message.type === 'clear');
    return texts.slice(0, firstClear === -1 ? texts.length : firstClear).filter((message) => message.type === 'mark').length;
  }

  clearsReceived(): number {
    return this.socket().texts.filter((message) => message.type === 'clear').length;
  }

  async hangUp(): Promise<number> {
    this.socket().sendJson({ type: 'hangup' });
    return this.socket().closed;
  }

  closed(): Promise<number> {
    return this.socket().closed;
  }

  private async open(): Promise<WebCallClient> {
    this.client = new WebCallClient(this.url);
    await this.client.opened;
    return this.client;
  }

  private socket(): WebCallClient {
    if (!this.client) throw new Error('connect() first');
    return this.client;
  }
}

function speech16k(name: 'hours' | 'interrupt'): Int16Array {
  const wav = readWav(new Uint8Array(readFileSync(join(__dirname, '..', 'fixtures', 'speech', `${name}.16k.wav`))));
  if (wav.sampleRate !== 16_000 || wav.channelCount !== 1) throw new Error(`${name}.16k.wav is not 16 kHz mono`);
  return wav.samples;
}

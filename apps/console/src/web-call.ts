import { notReadyProblems } from './agent-readiness';
import { api, messageOf, type ConfigProblem } from './api';
import { rmsOfPcm16 } from './audio-level';
import { isErrorEndReason } from './call-text';

export interface MintedWebCall {
  callId: string;
  token: string;
  expiresAt: string;
  url: string;
}

export type WebCallState = 'idle' | 'connecting' | 'live' | 'ended' | 'failed';

/** How the call ended, as this page saw it. */
export interface WebCallEnd {
  /** The server's end reason (its `ended` message), when it sent one. */
  reason: string | undefined;
  /** What the server said with the end (e.g. a restart's drain message), or why the page could not connect. */
  message: string | undefined;
  /** The agent cannot take calls: what to fix (POST /v1/agents/:id/web-calls answered 409 agent_not_ready). */
  notReady: ConfigProblem[] | undefined;
}

export interface WebCallEvents {
  state(state: WebCallState): void;
  /** The call has a record (its page exists) from here on. */
  callId(callId: string): void;
  /** RMS (0..1) of what the agent's audio playback played over the last ~0.1 s. */
  agentLevel(rms: number): void;
  /** RMS (0..1) of the last 20 ms of microphone audio sent to the agent. */
  microphoneLevel(rms: number): void;
  /** A problem the server reported while the call goes on (a protocol error). */
  notice(message: string): void;
  ended(end: WebCallEnd): void;
}

/** The protocol's audio: PCM16 at 16 kHz, which the AudioContext produces and plays directly. */
const SAMPLE_RATE = 16_000;

/**
 * A call to an agent from this page: the microphone (echo cancellation on, so the agent does not hear
 * itself from the speakers and barge in on its own voice) goes to the server over the web-call
 * WebSocket as 20 ms PCM16 frames; the agent's frames play through an AudioWorklet that says when
 * each mark's audio has played, and drops its queue on `clear`, echoing the dropped marks, exactly
 * as Twilio does for a phone call.
 */
export class BrowserWebCall {
  private socket: WebSocket | undefined;
  private context: AudioContext | undefined;
  private microphone: MediaStream | undefined;
  private playback: AudioWorkletNode | undefined;
  private ended = false;
  /** The server's `ended` message: why, and what it said (e.g. the drain message of a restarting server). */
  private endedBy: { reason?: string; message?: string } = {};

  constructor(
    private readonly apiKey: string,
    private readonly events: WebCallEvents,
  ) {}

  async start(agentId: string): Promise<void> {
    this.events.state('connecting');
    try {
      this.microphone = await navigator.mediaDevices.getUserMedia({ audio: { echoCancellation: true, noiseSuppression: true, autoGainControl: true, channelCount: 1 } });
      this.context = new AudioContext({ sampleRate: SAMPLE_RATE, latencyHint: 'interactive' });
      await this.context.audioWorklet.addModule('/worklets/pcm-capture.js');
      await this.context.audioWorklet.addModule('/worklets/pcm-playback.js');
      const minted = await api<MintedWebCall>(`/v1/agents/${encodeURIComponent(agentId)}/web-calls`, { key: this.apiKey, method: 'POST', body: {} });
      this.events.callId(minted.callId);
      // Same origin as the page (the console and the API are served together), whatever PUBLIC_BASE_URL says.
      const socket = new WebSocket(`${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/v1/web-calls`);
      socket.binaryType = 'arraybuffer';
      this.socket = socket;
      socket.onopen = () => socket.send(JSON.stringify({ type: 'start', callId: minted.callId, token: minted.token }));
      socket.onmessage = (event) => this.onMessage(event.data as ArrayBuffer | string);
      socket.onclose = (event) => {
        // An `ended` message says why; a close without one (a dropped network, a refused token) is a failure.
        // An agent that fails ends its call like any other (code 1000); its reason says it failed.
        if (this.endedBy.reason !== undefined || event.code === 1000) this.finish(isErrorClose(event.code) || isErrorEndReason(this.endedBy.reason ?? null) ? 'failed' : 'ended', this.endedBy);
        else this.finish('failed', { message: `the connection to the call closed unexpectedly (WebSocket code ${event.code})` });
      };
      this.wireAudio(this.context, this.microphone);
    } catch (caught) {
      const notReady = notReadyProblems(caught);
      this.finish('failed', { message: notReady ? undefined : messageOf(caught) }, notReady);
    }
  }

  hangUp(): void {
    if (this.socket?.readyState === WebSocket.OPEN) this.socket.send('{"type":"hangup"}');
    else this.finish('ended', {});
  }

  private wireAudio(context: AudioContext, microphone: MediaStream): void {
    const capture = new AudioWorkletNode(context, 'pcm-capture');
    capture.port.onmessage = (event) => {
      const frame = event.data as ArrayBuffer;
      this.events.microphoneLevel(rmsOfPcm16(new Int16Array(frame)));
      if (this.socket?.readyState === WebSocket.OPEN) this.socket.send(frame);
    };
    context.createMediaStreamSource(microphone).connect(capture);
    this.playback = new AudioWorkletNode(context, 'pcm-playback', { outputChannelCount: [1] });
    this.playback.port.onmessage = (event) => {
      const message = event.data as { type: 'played'; name: string } | { type: 'cleared'; names: string[] } | { type: 'level'; rms: number };
      if (message.type === 'level') return this.events.agentLevel(message.rms);
      const names = message.type === 'played' ? [message.name] : message.names;
      for (const name of names) this.socket?.send(JSON.stringify({ type: 'mark', name }));
    };
    this.playback.connect(context.destination);
  }

  private onMessage(data: ArrayBuffer | string): void {
    if (typeof data !== 'string') {
      this.playback?.port.postMessage({ type: 'audio', buffer: data }, [data]);
      return;
    }
    const message = JSON.parse(data) as { type: string; name?: string; reason?: string; message?: string; code?: string };
    if (message.type === 'started') this.events.state('live');
    else if (message.type === 'mark') this.playback?.port.postMessage({ type: 'mark', name: message.name });
    else if (message.type === 'clear') this.playback?.port.postMessage({ type: 'clear' });
    else if (message.type === 'error') this.events.notice(message.message ?? message.code ?? 'the server reported an error');
    else if (message.type === 'ended') this.endedBy = { reason: message.reason, message: message.message };
  }

  private finish(state: 'ended' | 'failed', end: { reason?: string; message?: string }, notReady?: ConfigProblem[]): void {
    if (this.ended) return;
    this.ended = true;
    for (const track of this.microphone?.getTracks() ?? []) track.stop();
    void this.context?.close();
    if (this.socket && this.socket.readyState <= WebSocket.OPEN) this.socket.close();
    this.events.state(state);
    this.events.ended({ reason: end.reason, message: end.message, notReady });
  }
}

/** The server closes with 1011 after an agent error, 1002/1003 after a protocol error, 1008 for a refused token. */
function isErrorClose(code: number): boolean {
  return code !== 1000 && code !== 1001 && code !== 1005;
}

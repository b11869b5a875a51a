import WebSocket from 'ws';
import { REPLY_WAIT_MAX_MS } from './load-settings';
import { computeTwilioSignature, localMediaUrl, newSid, parseTwiml, voiceWebhookParams } from '@switchboard/simulated-caller';

/** 20 ms of 8 kHz mu-law. */
export const FRAME_BYTES = 160;
export const FRAME_MS = 20;
const SILENCE = 0xff;
const NEGATIVE_ZERO = 0x7f;
/** This many silent samples in a row inside a reply is inserted silence (a tone never has more than one). */
const GAP_MIN_SAMPLES = 3;

/** One utterance of the script, with its frames' base64 payloads precomputed (shared by every call). */
export interface ScriptedUtterance {
  payloads: readonly string[];
  /** Index of the frame holding the last speech sample: its send time is the end of speech. */
  speechEndFrame: number;
}

export interface CallTarget {
  serverUrl: string;
  publicBaseUrl: string;
  authToken: string;
  accountSid: string;
  to: string;
}

export interface ScaledCallOutcome {
  callId: string | null;
  /** Caller-observed: end of speech in the caller's audio -> first reply frame received, per utterance. */
  replyLatenciesMs: number[];
  /** The voice webhook's round trip; null when it failed outright. */
  answerMs: number | null;
  utterances: number;
  answered: number;
  framesSent: number;
  framesReceived: number;
  /** Runs of inserted silence inside replies, and their total length. */
  gaps: number;
  gapMs: number;
  /** Why the call failed, if it did (webhook error, socket lost). */
  error?: string;
  /** What the caller heard when the server turned the call away politely (at a limit); not a failure. */
  refused?: string;
}

type Phase = 'dialing' | 'streaming' | 'done';

/**
 * One simulated Twilio call of the load bench, driven by the bench's shared 20 ms clock (tick())
 * rather than a timer of its own: with hundreds of calls, one clock keeps every caller's audio on
 * time and costs the load driver one timer. Speaks its utterances with silence between them, echoes
 * marks once their audio has "played" (a playback buffer drained in real time), honours `clear`,
 * and measures what the caller hears.
 */
export class ScaledCall {
  private phase: Phase = 'dialing';
  private socket: WebSocket | undefined;
  private readonly callSid = newSid('CA');
  private readonly streamSid = newSid('MZ');
  private callId: string | null = null;
  private sequence = 1;
  private frameIndex = 0;
  /** Frames of the whole script: utterance frames, then silence frames, per utterance. */
  private readonly plan: Array<{ utterance: number; frame: number } | null> = [];
  private readonly speechEnds = new Map<number, number>();
  private readonly utteranceStarts: number[] = [];
  private readonly latencies: number[] = [];
  private pendingReply: { utterance: number; endOfSpeechAtMs: number | null } | undefined;
  private receivedMs = 0;
  private playedMs = 0;
  private readonly marks: Array<{ name: string; atMs: number }> = [];
  private silentRun = 0;
  private inReply = false;
  /** How long the voice webhook took to answer (Twilio waits this long before the caller hears anything). */
  private answerMs: number | null = null;
  private gaps = 0;
  private gapSamples = 0;
  private framesSent = 0;
  private framesReceived = 0;
  private error: string | undefined;
  private refused: string | undefined;
  private readonly finished: Promise<void>;
  private finish!: () => void;

  constructor(
    private readonly target: CallTarget,
    private readonly utterances: readonly ScriptedUtterance[],
    silencesMs: readonly number[],
    private readonly silencePayload: string,
    private readonly from: string,
  ) {
    this.finished = new Promise((resolve) => (this.finish = resolve));
    utterances.forEach((utterance, index) => {
      this.utteranceStarts.push(this.plan.length);
      this.speechEnds.set(this.plan.length + utterance.speechEndFrame, index);
      for (let frame = 0; frame < utterance.payloads.length; frame++) this.plan.push({ utterance: index, frame });
      const silentFrames = Math.round((silencesMs[index] ?? 0) / FRAME_MS);
      for (let frame = 0; frame < silentFrames; frame++) this.plan.push(null);
    });
  }

  /** Dials (signed voice webhook) and opens the media socket; the clock starts its audio after that. */
  async connect(): Promise<void> {
    try {
      const voiceUrl = `${this.target.publicBaseUrl}/twilio/voice`;
      const dialledAt = performance.now();
      const params = voiceWebhookParams({ accountSid: this.target.accountSid, callSid: this.callSid, from: this.from, to: this.target.to });
      const response = await fetch(`${this.target.serverUrl}/twilio/voice`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': computeTwilioSignature(this.target.authToken, voiceUrl, params) },
        body: new URLSearchParams(params).toString(),
      });
      const twiml = parseTwiml(await response.text());
      this.answerMs = performance.now() - dialledAt;
      if (response.status === 200 && twiml.rejected && twiml.hangup) {
        this.refused = twiml.sayText;
        return this.end();
      }
      if (response.status !== 200 || !twiml.stream) throw new Error(`voice webhook answered ${response.status}${twiml.sayText ? `: ${twiml.sayText}` : ''}`);
      const stream = twiml.stream;
      this.callId = stream.parameters['callId'] ?? null;
      const socket = new WebSocket(localMediaUrl(stream.url, this.target.serverUrl, this.target.publicBaseUrl), {
        headers: { 'X-Twilio-Signature': computeTwilioSignature(this.target.authToken, stream.url) },
        perMessageDeflate: false,
      });
      await new Promise<void>((resolve, reject) => {
        socket.once('open', resolve);
        socket.once('error', reject);
        socket.once('unexpected-response', (_req, res) => reject(new Error(`media upgrade answered ${res.statusCode}`)));
      });
      socket.on('message', (data: Buffer) => this.onMessage(data.toString('utf8')));
      socket.on('close', () => this.end(this.phase === 'streaming' ? 'the server closed the media socket' : undefined));
      socket.on('error', (error) => this.end(`media socket error: ${error.message}`));
      this.socket = socket;
      socket.send(JSON.stringify({ event: 'connected', protocol: 'Call', version: '1.0.0' }));
      socket.send(JSON.stringify({
        event: 'start',
        sequenceNumber: String(this.sequence++),
        streamSid: this.streamSid,
        start: {
          accountSid: this.target.accountSid,
          streamSid: this.streamSid,
          callSid: this.callSid,
          tracks: ['inbound'],
          customParameters: stream.parameters,
          mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 },
        },
      }));
      this.phase = 'streaming';
    } catch (error) {
      this.end(error instanceof Error ? error.message : String(error));
    }
  }

  /** The shared clock's 20 ms: send this call's next frame, play 20 ms of what it received. */
  tick(nowMs: number): void {
    if (this.phase !== 'streaming' || !this.socket) return;
    this.playedMs = Math.min(this.receivedMs, this.playedMs + FRAME_MS);
    while (this.marks.length > 0 && (this.marks[0] as { atMs: number }).atMs <= this.playedMs) this.echoMark((this.marks.shift() as { name: string }).name);
    const step = this.plan[this.frameIndex];
    if (step === undefined && !this.stillWaitingForReply(nowMs)) return this.hangUp();
    if (step === undefined || (step !== null && step.frame === 0 && this.stillWaitingForReply(nowMs))) return this.sendSilenceWhileWaiting();
    const payload = step === null ? this.silencePayload : (this.utterances[step.utterance] as ScriptedUtterance).payloads[step.frame];
    if (step !== null && step.frame === 0) this.closePendingReply();
    const index = this.frameIndex++;
    this.sendFrame(payload as string);
    const utterance = this.speechEnds.get(index);
    if (utterance !== undefined) this.pendingReply = { utterance, endOfSpeechAtMs: nowMs };
  }

  get done(): Promise<void> {
    return this.finished;
  }

  outcome(): ScaledCallOutcome {
    return {
      callId: this.callId,
      replyLatenciesMs: this.latencies,
      answerMs: this.answerMs,
      utterances: this.utterances.length,
      answered: this.latencies.length,
      framesSent: this.framesSent,
      framesReceived: this.framesReceived,
      gaps: this.gaps,
      gapMs: (this.gapSamples / 8),
      ...(this.error === undefined ? {} : { error: this.error }),
      ...(this.refused === undefined ? {} : { refused: this.refused }),
    };
  }

  private onMessage(text: string): void {
    const message = JSON.parse(text) as { event: string; media?: { payload: string }; mark?: { name: string } };
    if (message.event === 'media' && message.media) return this.onMedia(message.media.payload);
    if (message.event === 'mark' && message.mark) {
      this.marks.push({ name: message.mark.name, atMs: this.receivedMs });
      return;
    }
    if (message.event === 'clear') {
      this.receivedMs = this.playedMs;
      for (const mark of this.marks.splice(0)) this.echoMark(mark.name);
    }
  }

  private onMedia(payload: string): void {
    const now = performance.now();
    this.framesReceived += 1;
    this.receivedMs += FRAME_MS;
    if (payload === this.silencePayload) {
      this.silentRun += FRAME_BYTES;
      return;
    }
    if (this.pendingReply?.endOfSpeechAtMs != null) {
      this.latencies.push(now - this.pendingReply.endOfSpeechAtMs);
      this.pendingReply = undefined;
      // The reply starts at its first audible sample: the few near-zero samples before it are the
      // resampler's filter ramping up (its delay, counted in the latency), not silence inside the reply.
      this.inReply = false;
      this.silentRun = 0;
    }
    for (const byte of Buffer.from(payload, 'base64')) {
      if (byte === SILENCE || byte === NEGATIVE_ZERO) {
        this.silentRun += 1;
        continue;
      }
      if (this.inReply && this.silentRun >= GAP_MIN_SAMPLES) {
        this.gaps += 1;
        this.gapSamples += this.silentRun;
      }
      this.silentRun = 0;
      this.inReply = true;
    }
  }

  /** The last utterance's reply has not started and the caller has not yet given up on it. */
  private stillWaitingForReply(nowMs: number): boolean {
    const pending = this.pendingReply;
    return pending?.endOfSpeechAtMs != null && nowMs - pending.endOfSpeechAtMs < REPLY_WAIT_MAX_MS;
  }

  /** A frame of silence outside the script: the caller holds its next utterance (or its hang-up) for the reply. */
  private sendSilenceWhileWaiting(): void {
    this.sendFrame(this.silencePayload);
  }

  /** Chunk and timestamp count every frame sent, scripted or waited, as Twilio's do. */
  private sendFrame(payload: string): void {
    const chunk = this.framesSent++;
    this.socket?.send(
      `{"event":"media","sequenceNumber":"${this.sequence++}","media":{"track":"inbound","chunk":"${chunk + 1}","timestamp":"${chunk * FRAME_MS}","payload":"${payload}"},"streamSid":"${this.streamSid}"}`,
    );
  }

  /** The next utterance starts (or the call ends): a reply still pending for the last one was never heard. */
  private closePendingReply(): void {
    this.pendingReply = undefined;
    this.inReply = false;
    this.silentRun = 0;
  }

  private echoMark(name: string): void {
    this.socket?.send(`{"event":"mark","sequenceNumber":"${this.sequence++}","streamSid":"${this.streamSid}","mark":{"name":${JSON.stringify(name)}}}`);
  }

  private hangUp(): void {
    if (!this.socket) return this.end();
    this.socket.send(JSON.stringify({ event: 'stop', sequenceNumber: String(this.sequence++), streamSid: this.streamSid, stop: { accountSid: this.target.accountSid, callSid: this.callSid } }));
    this.phase = 'done';
    this.socket.close(1000);
    this.finish();
  }

  private end(error?: string): void {
    if (this.phase === 'done') return;
    this.phase = 'done';
    if (error !== undefined) this.error = error;
    this.socket?.terminate();
    this.finish();
  }
}

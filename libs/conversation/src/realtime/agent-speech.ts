import type { SpeechToSpeechAudioEvent, SpeechToSpeechTranscriptEvent } from '@switchboard/inference';
import type { AgentAudioOutput } from '../agent/agent-session';
import type { CallClock } from '../call/call-clock';
import { PlaybackTracker } from '../playback/playback-tracker';
import type { RealtimeTranscript } from './realtime-transcript';
import type { RequestedLines } from './requested-lines';
import type { SpokenItem, TurnEnd } from './spoken-item';

/**
 * What the agent is saying: the model's audio items as they are played to the caller (with marks,
 * so what was heard is known), their transcripts, and their records once each is over.
 */
export class AgentSpeech {
  private item: SpokenItem | undefined;
  private itemCounter = 0;
  /** Assistant transcript fragments that arrived before their item's first audio. */
  private earlyTranscript: { itemId: string; text: string } | undefined;
  /** The caller's turn the next item answers (set when the caller's speech or keypad input ends). */
  nextTurnEnd: TurnEnd | undefined;

  constructor(
    private readonly deps: {
      output: AgentAudioOutput;
      clock: CallClock;
      transcript: RealtimeTranscript;
      lines: RequestedLines;
      /** The agent started or stopped being heard (barge-in listens exactly then). */
      onPlayingChanged(playing: boolean): void;
      onItemStarted(item: SpokenItem): void;
      /** The longest one item may speak (the agent's maxReplyMs). */
      maxReplyMs: number;
      /** `item` spoke as long as it may: its audio is cut there; the model should stop. */
      onReplyLimit(item: SpokenItem): void;
    },
  ) {}

  /** The item being spoken, until it has been heard in full or cut. */
  get current(): SpokenItem | undefined {
    return this.item !== undefined && !this.item.done ? this.item : undefined;
  }

  onAudio(event: SpeechToSpeechAudioEvent): void {
    let item = this.item;
    if (!item || item.itemId !== event.itemId) {
      const previous = item;
      // The next item starts before the previous one is closed: the agent is heard throughout, so
      // barge-in stays armed and speech already going on keeps counting.
      item = this.start(event);
      if (previous && !previous.done) this.finish(previous, false);
    }
    // The model's mu-law goes to the call as it came (8 kHz: one byte per sample), with marks
    // every 250 ms of it however the model chunks its audio.
    item.tracker.sendAudio(event.audio, (piece) => this.deps.output.playMulaw(piece));
  }

  /**
   * The item's response is done: no more audio comes for it. Its final mark is placed and the
   * utterance ends, so its last partial frame goes out (padded) with the marks that waited for it.
   */
  audioComplete(item: SpokenItem): void {
    item.responseComplete = true;
    if (item.done) return;
    if (item.tracker.segmentOpen) item.tracker.endSegment();
    this.deps.output.endOfUtterance();
  }

  onMarkEchoed(name: string, cleared: boolean): void {
    this.item?.tracker.onMarkEchoed(name, cleared);
  }

  /** The model's transcript of its own audio (fragments, then the whole). */
  onTranscript(event: SpeechToSpeechTranscriptEvent): void {
    const item = this.item?.itemId === event.itemId ? this.item : undefined;
    if (event.final) {
      if (item) item.transcript = event.text;
      return;
    }
    if (item) item.transcript += event.text;
    // Text can run ahead of audio: keep it for the item its audio will start.
    else if (this.earlyTranscript?.itemId === event.itemId) this.earlyTranscript.text += event.text;
    else this.earlyTranscript = { itemId: event.itemId, text: event.text };
  }

  /** The item is over: played in full, or cut (`interrupted`: what was heard is recorded). */
  finish(item: SpokenItem, interrupted: boolean): void {
    const wasPlaying = this.current !== undefined;
    item.done = true;
    this.deps.transcript.item(item, interrupted);
    if (item.tracker.segmentOpen) item.tracker.endSegment();
    if (interrupted) item.tracker.abandon();
    if (this.item === item) this.item = undefined;
    if (wasPlaying && this.current === undefined) this.deps.onPlayingChanged(false);
  }

  private start(event: SpeechToSpeechAudioEvent): SpokenItem {
    const wasPlaying = this.current !== undefined;
    const line = this.deps.lines.lineFor(event.responseId);
    const early = this.earlyTranscript?.itemId === event.itemId ? this.earlyTranscript.text : '';
    this.earlyTranscript = undefined;
    this.itemCounter += 1;
    const { clock } = this.deps;
    const item: SpokenItem = {
      itemId: event.itemId,
      responseId: event.responseId,
      source: line?.source ?? 'speech',
      requestedText: line?.text,
      tracker: new PlaybackTracker(this.deps.output, 8000, `rt${this.itemCounter}`, undefined, this.deps.maxReplyMs),
      transcript: early,
      firstAudioMs: clock.nowMs(),
      firstMarkEchoedMs: undefined,
      turnEnd: this.nextTurnEnd,
      responseComplete: false,
      done: false,
    };
    item.tracker.onFirstEcho(() => (item.firstMarkEchoedMs ??= clock.nowMs()));
    item.tracker.onLimitReached(() => {
      if (!item.done) this.deps.onReplyLimit(item);
    });
    item.tracker.beginSegment('');
    this.item = item;
    this.nextTurnEnd = undefined;
    this.deps.onItemStarted(item);
    if (!wasPlaying) this.deps.onPlayingChanged(true);
    return item;
  }
}

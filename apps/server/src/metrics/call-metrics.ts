import { Injectable } from '@nestjs/common';
import type { TurnLatencyRecord } from '@switchboard/conversation';
import { Counter, Histogram } from 'prom-client';
import { MetricsRegistry } from './metrics.registry';

/** Replies: the bar is a few hundred ms, and a slow one is seconds. */
const REPLY_BUCKETS_S = [0.2, 0.3, 0.4, 0.5, 0.6, 0.8, 1, 1.5, 2, 3, 5, 10];
/** One step of the waterfall: from ms (VAD batches, first frame) to seconds (an LLM under load). */
const STEP_BUCKETS_S = [0.005, 0.01, 0.025, 0.05, 0.1, 0.2, 0.3, 0.5, 1, 2, 5];

/**
 * The waterfall's steps, each the time from the previous mark to this one (a missing mark leaves
 * its step and the next one unobserved: a reply without an LLM, say, has no llm step).
 */
const STEPS: ReadonlyArray<[step: string, from: keyof TurnLatencyRecord, to: keyof TurnLatencyRecord]> = [
  ['turn_decided', 'endOfSpeechMs', 'endOfTurnMs'],
  ['asr', 'endOfTurnMs', 'asrFinalMs'],
  ['llm_first_token', 'asrFinalMs', 'llmFirstTokenMs'],
  ['tts_first_byte', 'llmFirstTokenMs', 'ttsFirstByteMs'],
  ['first_frame', 'ttsFirstByteMs', 'firstFrameSentMs'],
  ['first_mark', 'firstFrameSentMs', 'firstMarkEchoedMs'],
];

/**
 * Call admission and reply latency, as Prometheus series (`GET /metrics`). Label sets are bounded:
 * direction, refusal reason, waterfall step; never an organization, a call or a number.
 */
@Injectable()
export class CallMetrics {
  private readonly admissions: Counter<'direction' | 'outcome'>;
  private readonly replyLatency: Histogram;
  private readonly steps: Histogram<'step'>;

  constructor(metrics: MetricsRegistry) {
    const registers = [metrics.registry];
    this.admissions = new Counter({
      name: 'switchboard_call_admissions_total',
      help: 'Admission decisions: outcome "admitted", or the refusal reason (concurrency_limit, budget_exceeded, capacity). A Twilio retry of a refused webhook is decided, and counted, again.',
      labelNames: ['direction', 'outcome'],
      registers,
    });
    this.replyLatency = new Histogram({
      name: 'switchboard_reply_latency_seconds',
      help: "From the end of the caller's speech to the mark that says the reply's first audio played at the caller (what the caller waits).",
      buckets: REPLY_BUCKETS_S,
      registers,
    });
    this.steps = new Histogram({
      name: 'switchboard_turn_step_seconds',
      help: "Each step of a reply's waterfall: turn_decided, asr, llm_first_token, tts_first_byte, first_frame, first_mark.",
      labelNames: ['step'],
      buckets: STEP_BUCKETS_S,
      registers,
    });
  }

  admitted(direction: string): void {
    this.admissions.inc({ direction, outcome: 'admitted' });
  }

  refused(direction: string, reason: string): void {
    this.admissions.inc({ direction, outcome: reason });
  }

  /** A reply's complete waterfall (its first mark echoed), observed once per turn. */
  turnCompleted(latency: TurnLatencyRecord): void {
    const { endOfSpeechMs, firstMarkEchoedMs } = latency;
    if (endOfSpeechMs !== null && firstMarkEchoedMs !== null && firstMarkEchoedMs >= endOfSpeechMs) {
      this.replyLatency.observe((firstMarkEchoedMs - endOfSpeechMs) / 1000);
    }
    for (const [step, from, to] of STEPS) {
      const start = latency[from];
      const end = latency[to];
      if (typeof start === 'number' && typeof end === 'number' && end >= start) this.steps.observe({ step }, (end - start) / 1000);
    }
  }
}

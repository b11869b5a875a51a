/**
 * What the server itself recorded about a level's calls, read back through the API once each call's
 * records are written: the caller frames it counted in (its `stream_closed` event) and the latency
 * waterfall of every reply. The caller-observed latency says *that* callers waited; the waterfall
 * steps say *where*: waiting for the silence, queueing before the turn was acted on, the engines,
 * or getting the first frame out.
 */
import type { TurnLatencyRecord } from '@switchboard/conversation';
import { distribution } from '../latency/latency-stats';

export type ApiGet = (path: string) => Promise<Record<string, unknown>>;

/** The waterfall fields this report reads, as GET /v1/calls/:id returns them (the call record's own names). */
type Waterfall = Pick<
  TurnLatencyRecord,
  'turnIndex' | 'endOfSpeechMs' | 'endOfTurnFrameMs' | 'endOfTurnMs' | 'asrFinalMs' | 'llmFirstTokenMs' | 'ttsFirstByteMs' | 'firstFrameSentMs'
>;

interface CallDetail {
  events?: Array<{ type: string; payload: { mediaFramesIn?: number } }>;
  latency?: Waterfall[];
}

/** Each step of the server's waterfall: from one stamp to the next. */
const STEPS: ReadonlyArray<{ name: string; from: Exclude<keyof Waterfall, 'turnIndex'>; to: Exclude<keyof Waterfall, 'turnIndex'> }> = [
  { name: 'silence wait', from: 'endOfSpeechMs', to: 'endOfTurnFrameMs' },
  { name: 'turn queueing', from: 'endOfTurnFrameMs', to: 'endOfTurnMs' },
  { name: 'ASR', from: 'endOfTurnMs', to: 'asrFinalMs' },
  { name: 'LLM first token', from: 'asrFinalMs', to: 'llmFirstTokenMs' },
  { name: 'TTS first byte', from: 'llmFirstTokenMs', to: 'ttsFirstByteMs' },
  { name: 'first frame out', from: 'ttsFirstByteMs', to: 'firstFrameSentMs' },
  { name: 'voice to voice', from: 'endOfSpeechMs', to: 'firstFrameSentMs' },
];

export interface WaterfallStep {
  name: string;
  count: number;
  p50: number | null;
  p95: number | null;
}

export interface ServerRecords {
  /** Caller frames sent that the server's stream_closed does not count, summed over the calls. */
  framesLost: number;
  /** Calls whose stream_closed never appeared (their records were not written in time). */
  callsWithoutRecords: number;
  steps: WaterfallStep[];
  /** The same over each call's first reply only (the arrival burst: new connections, cold paths). */
  firstReplySteps: WaterfallStep[];
}

/** Reads every call (8 at a time), waiting up to 5 s per call for its stream_closed event. */
export async function readServerRecords(get: ApiGet, calls: ReadonlyArray<{ callId: string | null; framesSent: number }>): Promise<ServerRecords> {
  let framesLost = 0;
  let callsWithoutRecords = 0;
  const waterfalls: Waterfall[] = [];
  const firstReplies: Waterfall[] = [];
  const queue = calls.filter((call) => call.callId !== null);
  const reader = async (): Promise<void> => {
    for (let call = queue.pop(); call; call = queue.pop()) {
      let detail: CallDetail | undefined;
      for (let attempt = 0; attempt < 20 && !detail; attempt++) {
        const candidate = (await get(`/v1/calls/${call.callId}`)) as CallDetail;
        if (candidate.events?.some((event) => event.type === 'stream_closed')) detail = candidate;
        else await new Promise((resolve) => setTimeout(resolve, 250));
      }
      if (!detail) {
        callsWithoutRecords += 1;
        continue;
      }
      const closed = detail.events?.find((event) => event.type === 'stream_closed');
      framesLost += Math.max(0, call.framesSent - (closed?.payload.mediaFramesIn ?? 0));
      const latency = detail.latency ?? [];
      waterfalls.push(...latency);
      const first = latency.reduce<Waterfall | undefined>((earliest, row) => (earliest === undefined || row.turnIndex < earliest.turnIndex ? row : earliest), undefined);
      if (first) firstReplies.push(first);
    }
  };
  await Promise.all(Array.from({ length: 8 }, reader));
  return { framesLost, callsWithoutRecords, steps: waterfallSteps(waterfalls), firstReplySteps: waterfallSteps(firstReplies) };
}

export function waterfallSteps(waterfalls: readonly Waterfall[]): WaterfallStep[] {
  const round = (value: number) => (Number.isFinite(value) ? Math.round(value) : null);
  return STEPS.map((step) => {
    const values = waterfalls.flatMap((waterfall) => {
      const from = waterfall[step.from];
      const to = waterfall[step.to];
      return from === null || to === null ? [] : [to - from];
    });
    const spread = distribution(values);
    return { name: step.name, count: values.length, p50: round(spread.p50), p95: round(spread.p95) };
  });
}

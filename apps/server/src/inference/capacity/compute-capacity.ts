/**
 * How many calls this instance's inference workers carry: the measured compute cost of one call
 * (per model, per second of call) against what the workers can do, so admission can refuse a call
 * BEFORE the device falls behind instead of after every caller's reply got slower.
 *
 * Units: a worker does at most one batch at a time, so one worker busy for a whole second is 1
 * worker-second per second, and the instance's capacity is its worker count. A model's cost per
 * call-second is the run time of its batches over the window divided by the call-seconds lived on
 * this instance in that window (calls counted by their usage meters), so the agents' mix is in it
 * (calls whose agents use remote engines cost only their VAD).
 *
 * Two kinds of model, priced differently:
 * - Per-turn models (ASR, TTS, turn model, LLM) run a few times a second of call at most. A new call
 *   is predicted to cost their summed cost per call-second, the mean call as measured, and admission
 *   plans with the highest estimate of the last minute, not the latest: while calls arrive, their
 *   call-seconds count at once but their compute only from their first turn (a caller speaks for
 *   seconds before anything is transcribed), so the latest window reads low exactly when a burst is
 *   being admitted (on bench:capacity it let 10 calls in where 8 fit).
 * - Streaming models (fed every call continuously: Silero's 31 windows a second) batch more rows
 *   as calls are added, so their cost per call at today's concurrency overstates the next call's
 *   (a lone call's VAD ~0.015 of a worker, a call's among 100 ~0.002): pricing calls with it refused
 *   4 of bench:load's 100 calls, which the server carries easily. They count by the load they
 *   measurably put on the workers over the last few seconds.
 */

export interface ComputeCapacityOptions {
  /** Share of the workers' time admission may plan to fill (INFERENCE_MAX_UTILISATION). */
  maxUtilisation: number;
  /** The measurement window (default 30 s). */
  windowMs?: number;
  /** Call-seconds a window needs before its costs replace the last measured ones (default 10). */
  minCallSeconds?: number;
  /** How long a higher cost estimate holds admission after it was measured (default 60 s). */
  peakHoldMs?: number;
  /**
   * An admitted call counts before its media stream starts here (its meter opens); a reservation
   * lapses after this long (default 60 s: an inbound stream starts within a few seconds, an outbound
   * one once the callee answers, and a call whose stream went to another instance, or never started,
   * must not hold capacity forever).
   */
  reservationTtlMs?: number;
  now?: () => number;
}

/** What admission and the API report. */
export interface CapacitySnapshot {
  /** 'measuring': no cost measured yet on this instance (calls are admitted); 'measured': admission applies. */
  state: 'measuring' | 'measured';
  /** Inference worker threads (capacity in worker-seconds per second); 0 before the runtime starts. */
  workers: number;
  maxUtilisation: number;
  /** Share of the workers' time the batches took over the window, 0..1+. */
  utilisation: number;
  /** Share the streaming models (those every call feeds continuously, e.g. the VAD) took over the last 5 s. */
  streamingUtilisation: number;
  /** Calls with a meter open here, and calls admitted here whose stream has not started yet. */
  liveCalls: number;
  reservedCalls: number;
  /** Worker-seconds per second one more call is predicted to cost: the per-turn models' costPerCallSecond summed; null if none ran. */
  costPerCall: number | null;
  /** The streaming load plus every live and reserved call at costPerCall. */
  predictedUtilisation: number | null;
  /** More calls admission would take now; null while measuring, or while only streaming models ran and their load is under the share. */
  callsHeadroom: number | null;
  /** Each model's measured cost per call-second (worker-seconds per second of call). */
  costPerCallSecond: Record<string, number>;
  /** Models every call feeds continuously (counted by their measured load, not priced per call). */
  streamingModels: string[];
}

export type CapacityDecision = { admitted: true } | { admitted: false; snapshot: CapacitySnapshot };

interface Bucket {
  startMs: number;
  computeMsByModel: Map<string, number>;
  rowsByModel: Map<string, number>;
  callMs: number;
}

const DEFAULT_WINDOW_MS = 30_000;
const BUCKET_MS = 1_000;
/**
 * A model fed at least this many rows per second of call runs continuously for every call (Silero:
 * 31.25 windows a second); per-turn models (ASR, TTS, turn model, LLM) are fed a few a second at most.
 */
const STREAMING_ROWS_PER_CALL_SECOND = 10;
/** Streaming models are counted by what they took over this recent span (their batches follow the calls). */
const STREAMING_SPAN_MS = 5_000;

export class ComputeCapacity {
  private readonly windowMs: number;
  private readonly minCallSeconds: number;
  private readonly reservationTtlMs: number;
  private readonly now: () => number;
  private readonly buckets: Bucket[] = [];
  /** Every model's cost per call-second in the last window with enough call-seconds (reported). */
  private costs = new Map<string, number>();
  /** Models run continuously for every call (see STREAMING_ROWS_PER_CALL_SECOND). */
  private streaming = new Set<string>();
  /** The per-turn models' costs admission plans with: the highest estimate of the last peakHoldMs. */
  private turnCosts = new Map<string, number>();
  /** Recent per-turn estimates (per tick), for the highest of the last peakHoldMs. */
  private readonly estimates: Array<{ atMs: number; costs: Map<string, number>; total: number }> = [];
  private readonly peakHoldMs: number;
  private reservations: number[] = [];
  private workers = 0;
  private liveCalls = 0;
  private lastTickMs: number;

  constructor(private readonly options: ComputeCapacityOptions) {
    this.windowMs = options.windowMs ?? DEFAULT_WINDOW_MS;
    this.minCallSeconds = options.minCallSeconds ?? 10;
    this.reservationTtlMs = options.reservationTtlMs ?? 60_000;
    this.peakHoldMs = options.peakHoldMs ?? 60_000;
    this.now = options.now ?? (() => performance.now());
    this.lastTickMs = this.now();
  }

  /** The runtime started with this many worker threads. */
  setWorkers(workers: number): void {
    this.workers = workers;
  }

  /** One batch's run on a worker (the runtime's onBatch): its run time and the rows (call streams) in it. */
  batchRan(model: string, runMs: number, rows = 1): void {
    const bucket = this.currentBucket();
    bucket.computeMsByModel.set(model, (bucket.computeMsByModel.get(model) ?? 0) + runMs);
    bucket.rowsByModel.set(model, (bucket.rowsByModel.get(model) ?? 0) + rows);
  }

  /**
   * A call's meter opened here: its media stream started, so one reservation (if any) is now a live
   * call, counted at once (the next tick reads the true count) so that it is never in neither.
   */
  callStarted(): void {
    this.dropLapsedReservations();
    this.reservations.shift();
    this.liveCalls += 1;
  }

  /**
   * Called every second with the calls live here: accrues call-seconds and re-derives the costs
   * once the window holds enough of them.
   */
  tick(liveCalls: number): void {
    const now = this.now();
    // The interval since the last tick goes to the bucket its batches were counted in.
    (this.buckets.at(-1) ?? this.currentBucket()).callMs += this.liveCalls * Math.max(0, now - this.lastTickMs);
    this.lastTickMs = now;
    this.liveCalls = liveCalls;
    while (this.buckets.length > 0 && (this.buckets[0] as Bucket).startMs + BUCKET_MS <= now - this.windowMs) this.buckets.shift();
    const window = this.totals(this.buckets);
    if (window.callMs / 1000 >= this.minCallSeconds) {
      const costs = new Map<string, number>();
      const streaming = new Set<string>();
      for (const [model, computeMs] of window.computeMsByModel) {
        costs.set(model, computeMs / window.callMs);
        if (((window.rowsByModel.get(model) ?? 0) * 1000) / window.callMs >= STREAMING_ROWS_PER_CALL_SECOND) streaming.add(model);
      }
      this.costs = costs;
      this.streaming = streaming;
      const turnCosts = new Map([...costs].filter(([model]) => !streaming.has(model)));
      this.estimates.push({ atMs: now, costs: turnCosts, total: [...turnCosts.values()].reduce((sum, cost) => sum + cost, 0) });
    }
    while (this.estimates.length > 1 && (this.estimates[0] as { atMs: number }).atMs < now - this.peakHoldMs) this.estimates.shift();
    // The highest recent estimate; with none recent (no calls for a while), the last one measured.
    const peak = this.estimates.reduce<(typeof this.estimates)[number] | undefined>((best, estimate) => (best === undefined || estimate.total > best.total ? estimate : best), undefined);
    if (peak) this.turnCosts = peak.costs;
  }

  /**
   * Admits one more call if the streaming models' measured load, plus every live and reserved call
   * and this one at the per-turn models' measured cost, stays within maxUtilisation of the workers;
   * an admitted call is reserved until its stream starts. Synchronous, so a group of admissions
   * decided together each see the ones before them. An idle instance always takes a call: one call
   * costing more than the planned share must still be served (and measured again), or the instance
   * would refuse every call for good.
   */
  tryAdmit(): CapacityDecision {
    this.dropLapsedReservations();
    const planned = this.liveCalls + this.reservations.length;
    if (this.isMeasured() && planned > 0) {
      const predicted = this.streamingUtilisation() + ((planned + 1) * (this.costPerCall() ?? 0)) / this.workers;
      if (predicted > this.options.maxUtilisation + 1e-9) return { admitted: false, snapshot: this.snapshot() };
    }
    this.reservations.push(this.now() + this.reservationTtlMs);
    return { admitted: true };
  }

  snapshot(): CapacitySnapshot {
    this.dropLapsedReservations();
    const costPerCall = this.costPerCall();
    const now = this.now();
    const spanMs = Math.min(this.windowMs, Math.max(BUCKET_MS, now - ((this.buckets[0]?.startMs) ?? now)));
    const computeMs = [...this.totals(this.buckets).computeMsByModel.values()].reduce((sum, ms) => sum + ms, 0);
    const planned = this.liveCalls + this.reservations.length;
    const measured = this.isMeasured();
    const streaming = measured ? this.streamingUtilisation() : 0;
    return {
      state: measured ? 'measured' : 'measuring',
      workers: this.workers,
      maxUtilisation: this.options.maxUtilisation,
      utilisation: this.workers > 0 ? computeMs / spanMs / this.workers : 0,
      streamingUtilisation: streaming,
      liveCalls: this.liveCalls,
      reservedCalls: this.reservations.length,
      costPerCall,
      predictedUtilisation: measured ? streaming + (planned * (costPerCall ?? 0)) / this.workers : null,
      callsHeadroom: measured ? this.headroom(planned, streaming, costPerCall) : null,
      costPerCallSecond: Object.fromEntries(this.costs),
      streamingModels: [...this.streaming],
    };
  }

  /** Calls that still fit: bounded by the per-turn models' cost; by the streaming load alone only once it is over the share. */
  private headroom(planned: number, streaming: number, costPerCall: number | null): number | null {
    const room = this.options.maxUtilisation - streaming;
    if (costPerCall === null) return room >= 0 || planned === 0 ? null : 0;
    return Math.max(planned === 0 ? 1 : 0, Math.floor((room * this.workers) / costPerCall + 1e-9) - planned);
  }

  private isMeasured(): boolean {
    return this.workers > 0 && this.costs.size > 0;
  }

  /**
   * The per-turn models' cost of one more call; null when none ran (streaming models only). Those
   * are counted by their measured load, not priced per call: a model every call feeds continuously
   * batches more rows as calls are added, so its cost per call at today's concurrency overstates
   * the next call's (Silero costs a lone call ~0.015 of a worker, and a call among 100 ~0.002).
   */
  private costPerCall(): number | null {
    if (this.turnCosts.size === 0) return null;
    const total = [...this.turnCosts.values()].reduce((sum, cost) => sum + cost, 0);
    return total > 0 ? total : null;
  }

  /** Share of the workers the streaming models took over the last few seconds. */
  private streamingUtilisation(): number {
    if (this.workers === 0 || this.streaming.size === 0) return 0;
    const now = this.now();
    const recent = this.buckets.filter((bucket) => bucket.startMs + BUCKET_MS > now - STREAMING_SPAN_MS);
    const spanMs = Math.min(STREAMING_SPAN_MS, Math.max(BUCKET_MS, now - ((recent[0]?.startMs) ?? now)));
    let computeMs = 0;
    for (const bucket of recent) for (const model of this.streaming) computeMs += bucket.computeMsByModel.get(model) ?? 0;
    return computeMs / spanMs / this.workers;
  }

  private currentBucket(): Bucket {
    const now = this.now();
    const last = this.buckets.at(-1);
    if (last && now < last.startMs + BUCKET_MS) return last;
    const bucket: Bucket = { startMs: now, computeMsByModel: new Map(), rowsByModel: new Map(), callMs: 0 };
    this.buckets.push(bucket);
    return bucket;
  }

  private totals(buckets: readonly Bucket[]): { computeMsByModel: Map<string, number>; rowsByModel: Map<string, number>; callMs: number } {
    const computeMsByModel = new Map<string, number>();
    const rowsByModel = new Map<string, number>();
    let callMs = 0;
    for (const bucket of buckets) {
      callMs += bucket.callMs;
      for (const [model, ms] of bucket.computeMsByModel) computeMsByModel.set(model, (computeMsByModel.get(model) ?? 0) + ms);
      for (const [model, rows] of bucket.rowsByModel) rowsByModel.set(model, (rowsByModel.get(model) ?? 0) + rows);
    }
    return { computeMsByModel, rowsByModel, callMs };
  }

  private dropLapsedReservations(): void {
    const now = this.now();
    if (this.reservations.length > 0 && (this.reservations[0] as number) <= now) this.reservations = this.reservations.filter((expiry) => expiry > now);
  }
}

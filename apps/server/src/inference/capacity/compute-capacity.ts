/**
 * How many calls this instance's inference workers carry: the measured compute cost of one call
 * (per model, per second of call) against what the workers can do, so admission can refuse a call
 * BEFORE the device falls behind instead of after every caller's reply got slower.
 *
 * Units: a worker does at most one batch at a time, so one worker busy for a whole second is 1
 * worker-second per second, and the instance's capacity is its worker count. A model's cost per
 * call-second is the run time of its batches over the window divided by the call-seconds lived on
 * this instance in that window (calls counted by their usage meters): batching is in it (a batch of
 * 8 calls' VAD chunks costs each call an eighth), and so is the agents' mix (calls whose agents use
 * remote engines cost only their VAD). A new call is predicted to cost the sum over the models, the
 * mean call as measured.
 *
 * Admission uses the highest estimate of the last minute, not the latest: while calls arrive, their
 * call-seconds count at once but their compute only from their first turn on (a caller speaks for
 * seconds before anything is transcribed), so the latest window reads low exactly when a burst is
 * being admitted. Measured on bench:capacity, the latest window let 10 calls in where 8 fit.
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
  /** Calls with a meter open here, and calls admitted here whose stream has not started yet. */
  liveCalls: number;
  reservedCalls: number;
  /** Worker-seconds per second one more call is predicted to cost (sum of costPerCallSecond). */
  costPerCall: number | null;
  /** Predicted share of the workers with every live and reserved call at the measured cost. */
  predictedUtilisation: number | null;
  /** More calls admission would take now; null while measuring. */
  callsHeadroom: number | null;
  /** Each model's measured cost per call-second (worker-seconds per second of call). */
  costPerCallSecond: Record<string, number>;
}

export type CapacityDecision = { admitted: true } | { admitted: false; snapshot: CapacitySnapshot };

interface Bucket {
  startMs: number;
  computeMsByModel: Map<string, number>;
  callMs: number;
}

const DEFAULT_WINDOW_MS = 30_000;
const BUCKET_MS = 1_000;

export class ComputeCapacity {
  private readonly windowMs: number;
  private readonly minCallSeconds: number;
  private readonly reservationTtlMs: number;
  private readonly now: () => number;
  private readonly buckets: Bucket[] = [];
  /** The last window's costs that had enough call-seconds; kept when calls end, so the next burst is judged by them. */
  private costs = new Map<string, number>();
  /** Recent estimates (per tick), for the highest of the last peakHoldMs. */
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

  /** One batch's run on a worker (the runtime's onBatch). */
  batchRan(model: string, runMs: number): void {
    const bucket = this.currentBucket();
    bucket.computeMsByModel.set(model, (bucket.computeMsByModel.get(model) ?? 0) + runMs);
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
    const window = this.windowTotals();
    if (window.callMs / 1000 >= this.minCallSeconds) {
      const costs = new Map<string, number>();
      for (const [model, computeMs] of window.computeMsByModel) costs.set(model, computeMs / window.callMs);
      this.estimates.push({ atMs: now, costs, total: [...costs.values()].reduce((sum, cost) => sum + cost, 0) });
    }
    while (this.estimates.length > 1 && (this.estimates[0] as { atMs: number }).atMs < now - this.peakHoldMs) this.estimates.shift();
    // The highest recent estimate; with none recent (no calls for a while), the last one measured.
    const peak = this.estimates.reduce<(typeof this.estimates)[number] | undefined>((best, estimate) => (best === undefined || estimate.total > best.total ? estimate : best), undefined);
    if (peak) this.costs = peak.costs;
  }

  /**
   * Admits one more call if, at the measured cost, every live and reserved call plus this one stays
   * within maxUtilisation of the workers; an admitted call is reserved until its stream starts.
   * Synchronous, so a group of admissions decided together each see the ones before them. An idle
   * instance always takes a call: one call costing more than the planned share must still be served
   * (and measured again), or the instance would refuse every call for good.
   */
  tryAdmit(): CapacityDecision {
    this.dropLapsedReservations();
    const costPerCall = this.costPerCall();
    const planned = this.liveCalls + this.reservations.length;
    if (costPerCall !== null && this.workers > 0 && planned > 0) {
      const calls = planned + 1;
      if ((calls * costPerCall) / this.workers > this.options.maxUtilisation + 1e-9) return { admitted: false, snapshot: this.snapshot() };
    }
    this.reservations.push(this.now() + this.reservationTtlMs);
    return { admitted: true };
  }

  snapshot(): CapacitySnapshot {
    this.dropLapsedReservations();
    const costPerCall = this.costPerCall();
    const window = this.windowTotals();
    const spanMs = Math.min(this.windowMs, Math.max(BUCKET_MS, this.now() - ((this.buckets[0]?.startMs) ?? this.now())));
    const computeMs = [...window.computeMsByModel.values()].reduce((sum, ms) => sum + ms, 0);
    const planned = this.liveCalls + this.reservations.length;
    const measured = costPerCall !== null && this.workers > 0;
    return {
      state: measured ? 'measured' : 'measuring',
      workers: this.workers,
      maxUtilisation: this.options.maxUtilisation,
      utilisation: this.workers > 0 ? computeMs / spanMs / this.workers : 0,
      liveCalls: this.liveCalls,
      reservedCalls: this.reservations.length,
      costPerCall,
      predictedUtilisation: measured ? (planned * costPerCall) / this.workers : null,
      callsHeadroom: measured ? Math.max(planned === 0 ? 1 : 0, Math.floor((this.options.maxUtilisation * this.workers) / costPerCall + 1e-9) - planned) : null,
      costPerCallSecond: Object.fromEntries(this.costs),
    };
  }

  /** null until a window with enough call-seconds was measured; a cost of 0 (no local model ran) never refuses. */
  private costPerCall(): number | null {
    if (this.costs.size === 0) return null;
    const total = [...this.costs.values()].reduce((sum, cost) => sum + cost, 0);
    return total > 0 ? total : null;
  }

  private currentBucket(): Bucket {
    const now = this.now();
    const last = this.buckets.at(-1);
    if (last && now < last.startMs + BUCKET_MS) return last;
    const bucket: Bucket = { startMs: now, computeMsByModel: new Map(), callMs: 0 };
    this.buckets.push(bucket);
    return bucket;
  }

  private windowTotals(): { computeMsByModel: Map<string, number>; callMs: number } {
    const computeMsByModel = new Map<string, number>();
    let callMs = 0;
    for (const bucket of this.buckets) {
      callMs += bucket.callMs;
      for (const [model, ms] of bucket.computeMsByModel) computeMsByModel.set(model, (computeMsByModel.get(model) ?? 0) + ms);
    }
    return { computeMsByModel, callMs };
  }

  private dropLapsedReservations(): void {
    const now = this.now();
    if (this.reservations.length > 0 && (this.reservations[0] as number) <= now) this.reservations = this.reservations.filter((expiry) => expiry > now);
  }
}

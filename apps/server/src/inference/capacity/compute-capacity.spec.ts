import { ComputeCapacity } from './compute-capacity';

/** A capacity meter on a hand-driven clock. */
function meter(options: { maxUtilisation?: number; workers?: number } = {}) {
  let nowMs = 0;
  const capacity = new ComputeCapacity({ maxUtilisation: options.maxUtilisation ?? 0.8, now: () => nowMs });
  capacity.setWorkers(options.workers ?? 2);
  /** `seconds` of wall time with `calls` live, each call costing `perCall` worker-seconds per second of `model`. */
  const live = (seconds: number, calls: number, perCall: Record<string, number>): void => {
    capacity.tick(calls);
    for (let s = 0; s < seconds; s++) {
      for (const [model, cost] of Object.entries(perCall)) capacity.batchRan(model, calls * cost * 1000);
      nowMs += 1000;
      capacity.tick(calls);
    }
  };
  return { capacity, live, advance: (ms: number) => (nowMs += ms) };
}

describe('ComputeCapacity', () => {
  it('admits every call while nothing is measured, and says so', () => {
    const { capacity } = meter();
    for (let i = 0; i < 50; i++) expect(capacity.tryAdmit()).toEqual({ admitted: true });
    expect(capacity.snapshot()).toMatchObject({ state: 'measuring', costPerCall: null, callsHeadroom: null, reservedCalls: 50 });
  });

  it('measures each model\'s cost per call-second from batch run time over call-seconds', () => {
    const { capacity, live } = meter();
    live(20, 4, { 'whisper-base.en': 0.1, 'silero-vad-v5': 0.002 });
    const snapshot = capacity.snapshot();
    expect(snapshot.state).toBe('measured');
    expect(snapshot.costPerCallSecond['whisper-base.en']).toBeCloseTo(0.1, 6);
    expect(snapshot.costPerCallSecond['silero-vad-v5']).toBeCloseTo(0.002, 6);
    expect(snapshot.costPerCall).toBeCloseTo(0.102, 6);
    // 4 calls x 0.102 over 2 workers.
    expect(snapshot.utilisation).toBeCloseTo(0.204, 2);
  });

  it('refuses the call that would take the predicted load past maxUtilisation, counting live and reserved calls', () => {
    const { capacity, live } = meter({ maxUtilisation: 0.8, workers: 2 });
    // 0.2 worker-seconds per call-second: 2 workers x 0.8 carry 8 calls.
    live(20, 4, { asr: 0.2 });
    expect(capacity.snapshot().callsHeadroom).toBe(4);
    for (let i = 0; i < 4; i++) expect(capacity.tryAdmit().admitted).toBe(true);
    const refused = capacity.tryAdmit();
    expect(refused.admitted).toBe(false);
    if (refused.admitted) return;
    expect(refused.snapshot).toMatchObject({ liveCalls: 4, reservedCalls: 4, callsHeadroom: 0, predictedUtilisation: 0.8 });
  });

  it('turns a reservation into a live call when its stream starts, and lets an unclaimed one lapse', () => {
    const { capacity, live, advance } = meter({ maxUtilisation: 0.8, workers: 2 });
    live(20, 7, { asr: 0.2 });
    expect(capacity.tryAdmit().admitted).toBe(true);
    expect(capacity.tryAdmit().admitted).toBe(false);
    // The stream started: the meter count (tick) takes over from the reservation.
    capacity.callStarted();
    capacity.tick(8);
    expect(capacity.snapshot()).toMatchObject({ liveCalls: 8, reservedCalls: 0, callsHeadroom: 0 });
    capacity.tick(7);
    expect(capacity.tryAdmit().admitted).toBe(true);
    // This one never streams here: after 60 s its place is free again.
    advance(60_000);
    capacity.tick(7);
    expect(capacity.snapshot().reservedCalls).toBe(0);
    expect(capacity.tryAdmit().admitted).toBe(true);
  });

  it('keeps the last measured costs when the calls end, so the next burst is judged by them', () => {
    const { capacity, live } = meter({ maxUtilisation: 0.5, workers: 1 });
    live(20, 2, { asr: 0.1 });
    live(60, 0, {});
    expect(capacity.snapshot()).toMatchObject({ state: 'measured', utilisation: 0, liveCalls: 0 });
    const admitted = Array.from({ length: 10 }, () => capacity.tryAdmit().admitted).filter(Boolean).length;
    expect(admitted).toBe(5);
  });

  it('follows a rise in cost at once, and a fall only once the higher estimate is a minute old', () => {
    const { capacity, live } = meter();
    live(30, 4, { asr: 0.05 });
    live(30, 4, { asr: 0.2 });
    expect(capacity.snapshot().costPerCall).toBeCloseTo(0.2, 3);
    // Cheaper again: for a minute admission still plans with the higher cost...
    live(45, 4, { asr: 0.05 });
    expect(capacity.snapshot().costPerCall).toBeGreaterThan(0.1);
    // ...then with the new one (once the 30 s window has no old run in it and a minute has passed).
    live(60, 4, { asr: 0.05 });
    expect(capacity.snapshot().costPerCall).toBeCloseTo(0.05, 3);
  });

  it('does not read a ramp of arriving calls as cheaper calls', () => {
    const { capacity, live } = meter({ maxUtilisation: 0.8, workers: 2 });
    live(30, 4, { asr: 0.2 });
    expect(capacity.snapshot().callsHeadroom).toBe(4);
    // Four more calls arrive: live at once, silent for their first seconds (no compute yet).
    capacity.tick(8);
    live(5, 8, { asr: 0.1 });
    expect(capacity.snapshot().costPerCall).toBeCloseTo(0.2, 3);
    expect(capacity.snapshot().callsHeadroom).toBe(0);
  });

  it('always takes a call when none is live or reserved, even one costing more than the planned share', () => {
    const { capacity, live } = meter({ maxUtilisation: 0.1, workers: 1 });
    // One call costs 0.3 of the worker: over the planned 0.1 on its own.
    live(20, 1, { asr: 0.3 });
    expect(capacity.tryAdmit().admitted).toBe(false);
    live(1, 0, {});
    expect(capacity.snapshot().callsHeadroom).toBe(1);
    expect(capacity.tryAdmit().admitted).toBe(true);
    expect(capacity.tryAdmit().admitted).toBe(false);
  });

  it('counts a streaming model (fed by every call continuously) by its measured load, not priced per call', () => {
    let nowMs = 0;
    const capacity = new ComputeCapacity({ maxUtilisation: 0.5, now: () => nowMs });
    capacity.setWorkers(1);
    /** `seconds` with `calls` live, their VAD in batches of all calls' windows at `msPerBatch` each (31 batches a second). */
    const vad = (seconds: number, calls: number, msPerBatch: number): void => {
      capacity.tick(calls);
      for (let s = 0; s < seconds; s++) {
        for (let batch = 0; batch < 31; batch++) capacity.batchRan('silero-vad-v5', msPerBatch, calls);
        nowMs += 1000;
        capacity.tick(calls);
      }
    };
    // One call: 0.3 ms a window, 0.0093 of the worker. Pricing calls with it would plan 53 calls.
    vad(20, 1, 0.3);
    expect(capacity.snapshot()).toMatchObject({ state: 'measured', streamingModels: ['silero-vad-v5'], costPerCall: null, callsHeadroom: null });
    expect(capacity.snapshot().costPerCallSecond['silero-vad-v5']).toBeCloseTo(0.0093, 4);
    // A burst of 200 admitted together is not refused for the lone call's VAD cost.
    for (let i = 0; i < 200; i++) expect(capacity.tryAdmit().admitted).toBe(true);
    // 200 calls batch their windows: 2 ms a batch of 200, 0.062 of the worker, far from the share.
    vad(10, 200, 2);
    expect(capacity.snapshot().streamingUtilisation).toBeCloseTo(0.062, 3);
    expect(capacity.tryAdmit().admitted).toBe(true);
    // The VAD itself fills the worker past the share: refused, headroom 0.
    vad(6, 400, 20);
    expect(capacity.snapshot().streamingUtilisation).toBeCloseTo(0.62, 2);
    expect(capacity.tryAdmit().admitted).toBe(false);
    expect(capacity.snapshot().callsHeadroom).toBe(0);
  });

  it('adds the per-turn models\' cost per call to the streaming load', () => {
    let nowMs = 0;
    const capacity = new ComputeCapacity({ maxUtilisation: 0.8, now: () => nowMs });
    capacity.setWorkers(1);
    capacity.tick(4);
    for (let s = 0; s < 20; s++) {
      for (let batch = 0; batch < 31; batch++) capacity.batchRan('silero-vad-v5', 1, 4); // 0.031 of the worker
      capacity.batchRan('whisper-encoder', 4 * 100, 4); // 0.1 per call
      nowMs += 1000;
      capacity.tick(4);
    }
    const snapshot = capacity.snapshot();
    expect(snapshot.costPerCall).toBeCloseTo(0.1, 6);
    expect(snapshot.streamingUtilisation).toBeCloseTo(0.031, 3);
    // (0.8 - 0.031) / 0.1 = 7.69: 7 calls, 4 live.
    expect(snapshot.callsHeadroom).toBe(3);
    expect(snapshot.predictedUtilisation).toBeCloseTo(0.431, 3);
  });

  it('never refuses before the runtime has workers', () => {
    const { capacity, live } = meter({ workers: 0 });
    live(20, 4, { asr: 0.5 });
    for (let i = 0; i < 20; i++) expect(capacity.tryAdmit().admitted).toBe(true);
    expect(capacity.snapshot()).toMatchObject({ state: 'measuring', callsHeadroom: null });
  });
});

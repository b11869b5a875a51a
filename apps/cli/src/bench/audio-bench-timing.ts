/**
 * Interleaved timing for the audio bench. Every implementation runs in short rounds, round-robin,
 * so a burst of load from a neighbour hits all of them alike; per implementation we keep the best
 * round (the least disturbed) and the median round.
 */
export interface Timing {
  /** Best round, ns per call. */
  readonly bestNs: number;
  /** Median round, ns per call. */
  readonly medianNs: number;
}

export interface TimingPlan {
  readonly warmupCalls: number;
  readonly rounds: number;
  readonly callsPerRound: number;
}

export function timeInterleaved(calls: ReadonlyMap<string, () => void>, plan: TimingPlan): Map<string, Timing> {
  for (const call of calls.values()) for (let i = 0; i < plan.warmupCalls; i++) call();
  const rounds = new Map<string, number[]>();
  for (const name of calls.keys()) rounds.set(name, []);
  for (let round = 0; round < plan.rounds; round++) {
    for (const [name, call] of calls) {
      const start = process.hrtime.bigint();
      for (let i = 0; i < plan.callsPerRound; i++) call();
      const elapsed = Number(process.hrtime.bigint() - start);
      rounds.get(name)!.push(elapsed / plan.callsPerRound);
    }
  }
  const result = new Map<string, Timing>();
  for (const [name, perCall] of rounds) {
    perCall.sort((a, b) => a - b);
    result.set(name, { bestNs: perCall[0]!, medianNs: perCall[perCall.length >> 1]! });
  }
  return result;
}

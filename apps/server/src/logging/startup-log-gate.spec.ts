import { StartupLogGate } from './startup-log-gate';

const INFO = 30;
const WARN = 40;
const ERROR = 50;

describe('StartupLogGate', () => {
  it("holds back a later cluster worker's start-up lines below error until it listens", () => {
    const gate = StartupLogGate.forThisProcess({ logLevel: 'info' }, { id: 2 });
    expect([INFO, WARN, ERROR].map((level) => gate.admits(level))).toEqual([false, false, true]);
    gate.open();
    expect([INFO, WARN, ERROR].map((level) => gate.admits(level))).toEqual([true, true, true]);
  });

  it('holds back nothing in the first worker, outside a cluster, or at debug', () => {
    for (const gate of [
      StartupLogGate.forThisProcess({ logLevel: 'info' }, { id: 1 }),
      StartupLogGate.forThisProcess({ logLevel: 'info' }, undefined),
      StartupLogGate.forThisProcess({ logLevel: 'debug' }, { id: 3 }),
    ]) {
      expect(gate.admits(INFO)).toBe(true);
    }
  });
});

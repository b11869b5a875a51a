/**
 * The caller thread as the bench starts it: a real worker thread from the TypeScript sources
 * (ts-node and the tsconfig paths registered inside it), its clock handshake, its CPU priority and
 * its shutdown. No calls are placed here (that needs the media rig and the VAD; the bench does it).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { getPriority } from 'node:os';
import { CallerThreads } from './caller-thread';

/** Nice value of every thread of this process (field 19 of /proc/<pid>/task/<tid>/stat). */
function threadNiceValues(): number[] {
  return readdirSync('/proc/self/task').map((tid) => {
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces; the fields after it are space-separated.
    const afterName = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(afterName[16]);
  });
}

const onLinux = process.platform === 'linux' ? it : it.skip;

describe('CallerThreads', () => {
  it('refuses a niceness outside 0-19 before starting anything', async () => {
    await expect(CallerThreads.start(1, { niceness: 20 })).rejects.toThrow('caller niceness must be a whole number from 0 to 19, got 20');
    await expect(CallerThreads.start(1, { niceness: -1 })).rejects.toThrow(RangeError);
  });

  onLinux(
    'starts a caller thread, maps its clock onto this one, lowers only its own priority, and ends it',
    async () => {
      const ownNiceBefore = getPriority();
      const atSevenBefore = threadNiceValues().filter((nice) => nice === 7).length;
      const callers = await CallerThreads.start(1, { niceness: 7 });
      try {
        expect(callers.count).toBe(1);
        const [clock] = callers.clocks;
        expect(Number.isFinite(clock!.offsetMs)).toBe(true);
        expect(clock!.disagreementMs).toBeLessThan(1);
        // One more thread at nice 7, and it is not this one.
        expect(threadNiceValues().filter((nice) => nice === 7).length).toBe(atSevenBefore + 1);
        expect(getPriority()).toBe(ownNiceBefore);
        callers.measureStart();
        const figures = await callers.measureStop();
        expect(figures).toHaveLength(1);
        expect(figures[0]!.gcPauses).toBeGreaterThanOrEqual(0);
        expect(Number.isFinite(figures[0]!.eventLoopMaxMs)).toBe(true);
      } finally {
        await callers.close();
      }
      // A closed thread answers nothing, and asking does not hang.
      await expect(callers.measureStop()).resolves.toEqual([]);
    },
    60_000,
  );
});

import { GroupCommit } from './group-commit';

describe('GroupCommit', () => {
  afterEach(() => jest.useRealTimers());

  function recorder(outcome: (group: ReadonlyArray<{ key: string; items: readonly number[] }>) => Map<string, unknown> | Error = () => new Map()) {
    const groups: Array<Array<[string, number[]]>> = [];
    const write = jest.fn(async (group: ReadonlyArray<{ key: string; items: readonly number[] }>) => {
      groups.push(group.map(({ key, items }) => [key, [...items]]));
      const result = outcome(group);
      if (result instanceof Error) throw result;
      return result;
    });
    return { groups, write };
  }

  it('joins what several calls submit within the window into one write, one entry per call in submission order', async () => {
    jest.useFakeTimers();
    const { groups, write } = recorder();
    const commit = new GroupCommit(write, { windowMs: 150, maxItems: 100 });
    const done = Promise.all([commit.submit('a', [1, 2]), commit.submit('b', [3]), commit.submit('a', [4])]);
    await jest.advanceTimersByTimeAsync(149);
    expect(write).not.toHaveBeenCalled();
    await jest.advanceTimersByTimeAsync(1);
    await done;
    expect(groups).toEqual([[['a', [1, 2, 4]], ['b', [3]]]]);
  });

  it('rejects only the calls the write reports as failed, with their own error', async () => {
    const missing = new Error('call b does not exist');
    const { write } = recorder(() => new Map([['b', missing]]));
    const commit = new GroupCommit(write, { windowMs: 1, maxItems: 100 });
    const [a, b] = await Promise.allSettled([commit.submit('a', [1]), commit.submit('b', [2])]);
    expect(a).toEqual({ status: 'fulfilled', value: undefined });
    expect(b).toEqual({ status: 'rejected', reason: missing });
  });

  it('rejects every submission of a group whose write fails (each caller keeps and retries its own batch)', async () => {
    const down = new Error('database down');
    const { write } = recorder(() => down);
    const commit = new GroupCommit(write, { windowMs: 1, maxItems: 100 });
    const outcomes = await Promise.allSettled([commit.submit('a', [1]), commit.submit('b', [2])]);
    expect(outcomes).toEqual([{ status: 'rejected', reason: down }, { status: 'rejected', reason: down }]);
  });

  it('writes at once when a group reaches maxItems, and never puts more than maxItems in one write (but one call alone)', async () => {
    const { groups, write } = recorder();
    const commit = new GroupCommit(write, { windowMs: 60_000, maxItems: 4 });
    await Promise.all([commit.submit('a', [1, 2, 3]), commit.submit('b', [4, 5]), commit.submit('c', [6, 7, 8, 9, 10])]);
    expect(groups).toEqual([[['a', [1, 2, 3]]], [['b', [4, 5]]], [['c', [6, 7, 8, 9, 10]]]]);
  });

  it('writes one group at a time: what arrives during a write forms the next group', async () => {
    let release: () => void = () => undefined;
    const groups: string[][] = [];
    const commit = new GroupCommit<number>(
      async (group) => {
        groups.push(group.map(({ key }) => key));
        if (groups.length === 1) await new Promise<void>((resolve) => (release = resolve));
        return new Map();
      },
      { windowMs: 1, maxItems: 100 },
    );
    const first = commit.submit('a', [1]);
    await new Promise((resolve) => setTimeout(resolve, 10));
    const second = Promise.all([commit.submit('b', [2]), commit.submit('c', [3])]);
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(groups).toEqual([['a']]);
    release();
    await Promise.all([first, second]);
    expect(groups).toEqual([['a'], ['b', 'c']]);
  });
});

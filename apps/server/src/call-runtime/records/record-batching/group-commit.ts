/** One call's part of a group: what it submitted, and how to tell it the outcome. */
interface Submission<T> {
  key: string;
  items: readonly T[];
  resolve: () => void;
  reject: (error: unknown) => void;
}

export interface GroupCommitOptions {
  /** Submissions arriving within this long of the first one are written together. */
  windowMs: number;
  /** A group stops growing at this many items (one statement's worth); the rest go in the next. */
  maxItems: number;
}

/**
 * Writes the batches of many calls as one database statement (group commit). Each live call still
 * buffers its own records and flushes them on its own clock; what the calls flush within
 * `windowMs` is joined, so a process with 250 live calls writes a handful of statements a second
 * instead of hundreds, and the event loop spends its time on audio rather than on query building.
 *
 * `write` receives the group and returns the keys that failed on their own (a missing call, a bad
 * record): only those submissions reject with their error. When `write` throws, every submission
 * in the group rejects with that error and each caller retries its own batch as before. One group
 * is written at a time; submissions that arrive meanwhile form the next. Nothing waits on this
 * from the media path: callers' flushes are fire-and-forget.
 */
export class GroupCommit<T> {
  private pending: Array<Submission<T>> = [];
  private pendingItems = 0;
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> | undefined;

  constructor(
    private readonly write: (group: ReadonlyArray<{ key: string; items: readonly T[] }>) => Promise<Map<string, unknown>>,
    private readonly options: GroupCommitOptions,
  ) {}

  submit(key: string, items: readonly T[]): Promise<void> {
    if (items.length === 0) return Promise.resolve();
    return new Promise((resolve, reject) => {
      this.pending.push({ key, items, resolve, reject });
      this.pendingItems += items.length;
      if (this.pendingItems >= this.options.maxItems) void this.drain();
      else this.timer ??= setTimeout(() => void this.drain(), this.options.windowMs);
    });
  }

  /** Writes everything submitted so far (tests, shutdown). */
  async drain(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    while (this.writing) await this.writing;
    while (this.pending.length > 0) {
      this.writing = this.writeGroup(this.takeGroup()).finally(() => (this.writing = undefined));
      await this.writing;
    }
  }

  private takeGroup(): Array<Submission<T>> {
    const group: Array<Submission<T>> = [];
    let items = 0;
    while (this.pending.length > 0) {
      const next = this.pending[0] as Submission<T>;
      if (group.length > 0 && items + next.items.length > this.options.maxItems) break;
      group.push(next);
      items += next.items.length;
      this.pending.shift();
    }
    this.pendingItems -= items;
    return group;
  }

  private async writeGroup(group: Array<Submission<T>>): Promise<void> {
    // A call may have submitted twice in the window (a flush, then its close): one entry per
    // call keeps the statement's per-call outcome unambiguous, in submission order.
    const byKey = new Map<string, T[]>();
    for (const submission of group) {
      const items = byKey.get(submission.key);
      if (items) items.push(...submission.items);
      else byKey.set(submission.key, [...submission.items]);
    }
    let failures: Map<string, unknown>;
    try {
      failures = await this.write([...byKey].map(([key, items]) => ({ key, items })));
    } catch (error) {
      for (const submission of group) submission.reject(error);
      return;
    }
    for (const submission of group) {
      const failure = failures.get(submission.key);
      if (failure === undefined) submission.resolve();
      else submission.reject(failure);
    }
  }
}

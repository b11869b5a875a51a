/**
 * Remote engine clients are cached per endpoint, model and key so calls share their circuit
 * breaker state and connection pools. The key itself never enters the cache key, only where it
 * came from (see EngineCredentials).
 */
export class EngineCache<T> {
  private readonly entries = new Map<string, Promise<T>>();

  get(parts: readonly (string | number | undefined)[], create: () => Promise<T> | T): Promise<T> {
    const key = JSON.stringify(parts);
    let entry = this.entries.get(key);
    if (!entry) {
      entry = Promise.resolve().then(create);
      // A failed load (model missing) is not cached: the operator may pull the model and retry.
      entry.catch(() => this.entries.delete(key));
      this.entries.set(key, entry);
    }
    return entry;
  }

  async values(): Promise<T[]> {
    const settled = await Promise.allSettled(this.entries.values());
    return settled.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
  }
}

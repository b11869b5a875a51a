import { AsyncLocalStorage } from 'node:async_hooks';
import NodeEnvironment from 'jest-environment-node';

/**
 * Jest's node environment, plus one clean-up between test files.
 *
 * With two cores Jest runs every test file in one process, each file with a fresh module registry.
 * A module-level AsyncLocalStorage (ours in transaction-scope.ts, nestjs-pino's, Prisma's) is
 * therefore created again for every file that boots a server, and once used it stays registered
 * with Node's async hooks for the life of the process: after ~200 files every promise and socket
 * paid for hundreds of stale stores (a 200k-await loop went from 55 to 250 ms), the event loop of a
 * 50-call burst stalled for over a second, and the stores kept each file's modules alive (the heap
 * grew past 1 GB). A production server loads its modules once, so this is the test process's
 * problem alone, and it is fixed here: every AsyncLocalStorage a test file enabled is disabled
 * when the file's environment is torn down, after its own afterAll hooks have closed its servers.
 */
const enabledStores = new Set<AsyncLocalStorage<unknown>>();
const PATCHED = Symbol.for('switchboard.test.asyncLocalStorageTracking');

function trackEnabledStores(): void {
  const prototype = AsyncLocalStorage.prototype as AsyncLocalStorage<unknown> & { [PATCHED]?: true };
  if (prototype[PATCHED]) return;
  prototype[PATCHED] = true;
  const run = prototype.run;
  const enterWith = prototype.enterWith;
  prototype.run = function trackedRun(this: AsyncLocalStorage<unknown>, ...args: Parameters<typeof run>) {
    enabledStores.add(this);
    return run.apply(this, args);
  } as typeof run;
  prototype.enterWith = function trackedEnterWith(this: AsyncLocalStorage<unknown>, store: unknown) {
    enabledStores.add(this);
    return enterWith.call(this, store);
  };
}

export default class SwitchboardNodeEnvironment extends NodeEnvironment {
  override async setup(): Promise<void> {
    trackEnabledStores();
    await super.setup();
  }

  override async teardown(): Promise<void> {
    for (const store of enabledStores) store.disable();
    enabledStores.clear();
    await super.teardown();
  }
}

import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { PersistenceError } from './persistence.errors';

/*
 * PGlite does not stop two processes from opening the same data folder, and two writers
 * corrupt it (e.g. the server and `npm run db:seed` both on the default ./data). A lock file
 * next to the folder holds the owner's pid; a lock whose process is gone is stale and taken
 * over. A pid equal to ours that this process does not hold is a previous incarnation (a
 * container restarted as pid 1), so it is stale too.
 */

const heldLocks = new Set<string>();

export interface DataDirLock {
  readonly path: string;
  release(): void;
}

export function acquireDataDirLock(dataDir: string): DataDirLock {
  const path = `${resolve(dataDir)}.lock`;
  if (heldLocks.has(path)) throw inUse(dataDir, path, process.pid);
  mkdirSync(dirname(path), { recursive: true });
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(path, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      heldLocks.add(path);
      return {
        path,
        release: () => {
          if (!heldLocks.delete(path)) return;
          rmSync(path, { force: true });
        },
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const ownerPid = Number.parseInt(readLock(path), 10);
      if (Number.isInteger(ownerPid) && ownerPid !== process.pid && isProcessAlive(ownerPid)) throw inUse(dataDir, path, ownerPid);
      rmSync(path, { force: true });
    }
  }
  throw inUse(dataDir, path, Number.NaN);
}

function readLock(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

/** Whether a process with this pid exists on this machine. */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to another user, still alive.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function inUse(dataDir: string, lockPath: string, pid: number): PersistenceError {
  const owner = Number.isNaN(pid) ? 'another process' : `process ${pid}`;
  return new PersistenceError(
    'embedded_start_failed',
    `The embedded database folder ${dataDir} is in use by ${owner}. Stop it or point DATA_DIR elsewhere ` +
      `(if that process is not Switchboard, delete ${lockPath}).`,
  );
}

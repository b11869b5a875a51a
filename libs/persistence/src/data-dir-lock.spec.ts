import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { acquireDataDirLock } from './data-dir-lock';

describe('acquireDataDirLock', () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'switchboard-lock-spec-'));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('writes our pid next to the folder, refuses a second holder in this process, and releases', () => {
    const dataDir = join(root, 'pglite');
    const lock = acquireDataDirLock(dataDir);
    expect(lock.path).toBe(`${dataDir}.lock`);
    expect(readFileSync(lock.path, 'utf8')).toBe(String(process.pid));
    expect(() => acquireDataDirLock(dataDir)).toThrow(expect.objectContaining({ code: 'embedded_start_failed' }));
    lock.release();
    expect(existsSync(lock.path)).toBe(false);
    acquireDataDirLock(dataDir).release();
  });

  it('refuses a folder locked by another live process', async () => {
    const dataDir = join(root, 'pglite');
    const holder = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)'], { stdio: 'ignore' });
    try {
      writeFileSync(`${dataDir}.lock`, String(holder.pid));
      expect(() => acquireDataDirLock(dataDir)).toThrow(new RegExp(`in use by process ${holder.pid}`));
    } finally {
      holder.kill();
    }
  });

  it('takes over a stale lock whose process is gone, or which is a previous incarnation of our pid', () => {
    const dataDir = join(root, 'pglite');
    const finished = spawnSync(process.execPath, ['-e', '']);
    writeFileSync(`${dataDir}.lock`, String(finished.pid));
    const lock = acquireDataDirLock(dataDir);
    expect(readFileSync(lock.path, 'utf8')).toBe(String(process.pid));
    lock.release();

    writeFileSync(`${dataDir}.lock`, String(process.pid));
    acquireDataDirLock(dataDir).release();
  });
});

import { randomBytes } from 'node:crypto';
import { chmodSync, closeSync, fsyncSync, openSync, readFileSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

/*
 * The embedded database's password (see embedded-postgres-auth.ts): generated once into a file
 * beside the data folder (`<DATA_DIR>/pglite.password`, mode 0600, as the secrets key file is), so
 * that only this user's processes can connect, whatever listens on loopback. PGlite itself stores no
 * password (the check happens in front of it), so a missing or empty file costs nothing: a new
 * password is generated, which is also how a database created before passwords existed is upgraded.
 *
 * Called with the data folder's lock held (data-dir-lock.ts), so no other process writes it at once.
 */

const PASSWORD_BYTES = 24;

export function embeddedPasswordPath(dataDir: string): string {
  return `${resolve(dataDir)}.password`;
}

export function loadOrCreateEmbeddedPassword(path: string): string {
  const existing = readPassword(path);
  if (existing) {
    tightenPermissions(path);
    return existing;
  }
  // Hex: safe in a connection URL without escaping.
  const password = randomBytes(PASSWORD_BYTES).toString('hex');
  // Written whole to a private temporary file, then renamed: a crash never leaves half a password.
  const temporary = `${dirname(path)}/.pglite-password.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  const fd = openSync(temporary, 'wx', 0o600);
  try {
    writeSync(fd, `${password}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    renameSync(temporary, path);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  }
  return password;
}

function readPassword(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8').trim() || undefined;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** A file copied in with looser permissions (a restored backup) would let other users connect. */
function tightenPermissions(path: string): void {
  // Windows has no POSIX modes: chmod there only toggles read-only.
  if (process.platform === 'win32') return;
  if ((statSync(path).mode & 0o077) !== 0) chmodSync(path, 0o600);
}

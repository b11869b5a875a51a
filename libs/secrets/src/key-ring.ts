import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  closeSync,
  fsyncSync,
  linkSync,
  mkdirSync,
  openSync,
  readFileSync,
  statSync,
  unlinkSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { inspect } from 'node:util';
import { ENCRYPTION_KEY_BYTES, EncryptionKeyError, formatEncryptionKey, keyId, parseEncryptionKey, requireKeyLength } from './encryption-key';

/**
 * The keys a server can seal and open with: one active key (every new seal) and the previous keys
 * (only opening values sealed before a rotation, until the rotate command re-seals them).
 *
 * Key material lives in private fields, and the ring prints and serialises as ids only, so logging
 * the ring (or an object holding it) can never leak a key.
 */

/** File name of the generated key inside DATA_DIR, when SECRETS_ENCRYPTION_KEY is unset. */
export const DEFAULT_KEY_FILE_NAME = 'secrets.key';

export interface SecretKeys {
  active: Buffer;
  previous?: readonly Buffer[];
}

export interface KeyRingSettings {
  /** SECRETS_ENCRYPTION_KEY; unset or blank: the key file. */
  encryptionKey?: string | undefined;
  /** SECRETS_PREVIOUS_KEYS, already split on commas. */
  previousKeys?: readonly string[];
  /** Where the generated key lives (DATA_DIR/secrets.key); needed when encryptionKey is unset. */
  keyFile?: string | undefined;
}

/** Where the active key came from, for the one startup log line. */
export type KeySource = 'environment' | 'key_file_created' | 'key_file';

export interface LoadedKeyRing {
  ring: SecretKeyRing;
  source: KeySource;
  /** The key file read or created (absent for 'environment'). */
  keyFile?: string;
  /** Things the operator should know (loosened file permissions, an orphaned key file). No key material. */
  warnings: string[];
}

export class SecretKeyRing {
  /** Key id -> key; the active key first. */
  readonly #keys = new Map<string, Buffer>();
  /** The id written beside every newly sealed value. */
  readonly activeKeyId: string;

  /**
   * Duplicates (the same key listed as active and previous, or twice as previous) are dropped by
   * id. Two DIFFERENT keys with the same id would make values unopenable by design, so that throws
   * (with 64-bit ids it does not happen by chance).
   */
  constructor({ active, previous = [] }: SecretKeys) {
    this.activeKeyId = this.#add(active);
    for (const key of previous) this.#add(key);
  }

  #add(key: Buffer): string {
    requireKeyLength(key);
    const id = keyId(key);
    const existing = this.#keys.get(id);
    if (existing === undefined) {
      // A copy: the caller's buffer may be reused or zeroed later.
      this.#keys.set(id, Buffer.from(key));
    } else if (!existing.equals(key)) {
      throw new EncryptionKeyError(`two different encryption keys share the key id ${id}; replace one of them`);
    }
    return id;
  }

  /** Every key id this ring can open, the active one first. */
  get keyIds(): string[] {
    return [...this.#keys.keys()];
  }

  /** Ids of the keys that only open (not the active one). */
  get previousKeyIds(): string[] {
    return this.keyIds.filter((id) => id !== this.activeKeyId);
  }

  has(id: string): boolean {
    return this.#keys.has(id);
  }

  /** The key with this id (a copy), or undefined. For the sealing code; never log the result. */
  keyFor(id: string): Buffer | undefined {
    const key = this.#keys.get(id);
    return key === undefined ? undefined : Buffer.from(key);
  }

  /** Ids only, never key material. */
  toJSON(): { activeKeyId: string; previousKeyIds: string[] } {
    return { activeKeyId: this.activeKeyId, previousKeyIds: this.previousKeyIds };
  }

  /** Ids only, never key material (also what `${ring}` and console.log(ring) print). */
  toString(): string {
    return `SecretKeyRing { active: ${this.activeKeyId}, previous: [${this.previousKeyIds.join(', ')}] }`;
  }

  [inspect.custom](): string {
    return this.toString();
  }

  /**
   * Builds the ring from the server's settings. The active key is SECRETS_ENCRYPTION_KEY when set;
   * otherwise the key file, generated on first start (the embedded default must work with zero
   * configuration, and a key regenerated on every start would make every stored secret unopenable).
   * Synchronous on purpose: it runs once at startup, before anything can seal or open.
   */
  static fromSettings(settings: KeyRingSettings): LoadedKeyRing {
    const warnings: string[] = [];
    const previous = (settings.previousKeys ?? [])
      .map((value, index) => ({ value: value.trim(), index }))
      .filter(({ value }) => value !== '')
      .map(({ value, index }) => parseEncryptionKey(value, `SECRETS_PREVIOUS_KEYS entry ${index + 1}`));

    const encryptionKey = settings.encryptionKey?.trim();
    if (encryptionKey !== undefined && encryptionKey !== '') {
      const ring = new SecretKeyRing({ active: parseEncryptionKey(encryptionKey, 'SECRETS_ENCRYPTION_KEY'), previous });
      if (settings.keyFile !== undefined) warnIfKeyFileOrphaned(ring, settings.keyFile, warnings);
      return { ring, source: 'environment', warnings };
    }

    if (settings.keyFile === undefined) {
      throw new EncryptionKeyError('no encryption key: set SECRETS_ENCRYPTION_KEY or give the path of a key file');
    }
    const { key, created } = loadOrCreateKeyFile(settings.keyFile, warnings);
    return {
      ring: new SecretKeyRing({ active: key, previous }),
      source: created ? 'key_file_created' : 'key_file',
      keyFile: settings.keyFile,
      warnings,
    };
  }
}

/**
 * Reads the key file, or creates it exactly once. Concurrent first starts (two processes on one
 * DATA_DIR) must end up with ONE key: creation is exclusive, and the loser reads the winner's key.
 */
function loadOrCreateKeyFile(path: string, warnings: string[]): { key: Buffer; created: boolean } {
  const existing = readKeyFile(path, warnings);
  if (existing !== undefined) return { key: existing, created: false };

  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const key = randomBytes(ENCRYPTION_KEY_BYTES);
  if (publishKeyFile(path, `${formatEncryptionKey(key)}\n`)) return { key, created: true };

  // Another process created it between our read and our write: use theirs, or the two processes
  // would seal with different keys.
  const theirs = readKeyFile(path, warnings);
  if (theirs === undefined) throw new EncryptionKeyError(`key file ${path} vanished while it was being created`);
  return { key: theirs, created: false };
}

/**
 * Writes the key file so that it appears complete or not at all, and only if it does not exist yet.
 * The key is written to a private temporary file (flag 'wx', mode 0600: never readable by others,
 * not even for an instant) and fsynced, then hard-linked to the final name: link() fails with
 * EEXIST if the name is taken, so exactly one creator wins and no reader sees a half-written key.
 * (rename() would silently replace a key another process just created.) Returns false if the file
 * already existed.
 */
function publishKeyFile(path: string, content: string): boolean {
  const temporary = join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
  const fd = openSync(temporary, 'wx', 0o600);
  try {
    writeSync(fd, content);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    linkSync(temporary, path);
  } catch (error) {
    if (errorCode(error) === 'EEXIST') return false;
    if (!['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS'].includes(errorCode(error) ?? '')) throw error;
    // A file system without hard links: exclusive create in place (a reader retries while it is empty).
    try {
      writeFileSync(path, content, { flag: 'wx', mode: 0o600 });
    } catch (fallbackError) {
      if (errorCode(fallbackError) === 'EEXIST') return false;
      throw fallbackError;
    }
  } finally {
    unlinkSync(temporary);
  }
  syncDirectory(dirname(path));
  return true;
}

/**
 * The key file's key, or undefined when there is no file. Tightens permissions looser than 0600
 * (with a warning): the file is as sensitive as every secret it protects.
 */
function readKeyFile(path: string, warnings: string[]): Buffer | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
    // Only a creator on a file system without hard links leaves an empty file, for an instant.
    for (let attempt = 0; text.trim() === '' && attempt < 50; attempt++) {
      sleepSync(20);
      text = readFileSync(path, 'utf8');
    }
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return undefined;
    throw new EncryptionKeyError(`cannot read key file ${path} (${errorCode(error) ?? 'unknown error'})`);
  }
  if (text.trim() === '') {
    throw new EncryptionKeyError(
      `key file ${path} is empty; restore it from a backup (or, if nothing was ever sealed with it, delete it to generate a new key)`,
    );
  }
  const key = parseEncryptionKey(text, `key file ${path}`);
  tightenPermissions(path, warnings);
  return key;
}

function tightenPermissions(path: string, warnings: string[]): void {
  // Windows has no POSIX modes: chmod there only toggles read-only.
  if (process.platform === 'win32') return;
  const mode = statSync(path).mode & 0o777;
  if ((mode & 0o077) === 0) return;
  const was = mode.toString(8).padStart(4, '0');
  try {
    chmodSync(path, 0o600);
    warnings.push(`key file ${path} had permissions ${was} (readable by other users); tightened to 0600`);
  } catch (error) {
    warnings.push(
      `key file ${path} has permissions ${was} (readable by other users) and could not be tightened to 0600 ` +
        `(${errorCode(error) ?? 'unknown error'}); fix its owner or permissions`,
    );
  }
}

/**
 * With SECRETS_ENCRYPTION_KEY set, a leftover key file from the embedded default usually means
 * values sealed with it that no key in the ring can open (someone switched to an env key without
 * listing the old one in SECRETS_PREVIOUS_KEYS). Say so at startup rather than at the first open.
 */
function warnIfKeyFileOrphaned(ring: SecretKeyRing, path: string, warnings: string[]): void {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return;
  }
  try {
    const id = keyId(parseEncryptionKey(text, `key file ${path}`));
    if (!ring.has(id)) {
      warnings.push(
        `key file ${path} holds key ${id}, which is neither SECRETS_ENCRYPTION_KEY nor in SECRETS_PREVIOUS_KEYS: ` +
          `values sealed with it cannot be opened; add its content to SECRETS_PREVIOUS_KEYS and run the rotate command`,
      );
    }
  } catch (error) {
    warnings.push(`key file ${path} is ignored (SECRETS_ENCRYPTION_KEY is set) and unreadable: ${(error as Error).message}`);
  }
}

/** Makes the new directory entry durable: losing the key after a crash would lose every secret. */
function syncDirectory(directory: string): void {
  try {
    const fd = openSync(directory, 'r');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch {
    // Not supported everywhere (Windows); the file's own fsync already happened.
  }
}

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

function errorCode(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string' ? error.code : undefined;
}

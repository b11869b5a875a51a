import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { EncryptionKeyError, keyId, parseEncryptionKey } from './encryption-key';
import { SecretKeyRing } from './key-ring';

// The object key-ring.ts imports from, so a spy on it changes what the code under test calls.
const realFs = jest.requireActual<typeof import('node:fs')>('node:fs');
const isWindows = process.platform === 'win32';

function mode(path: string): number {
  return statSync(path).mode & 0o777;
}

function expectNoKeyMaterial(text: string, ...keys: Buffer[]): void {
  for (const key of keys) {
    expect(text).not.toContain(key.toString('base64'));
    expect(text).not.toContain(key.toString('base64url'));
    expect(text).not.toContain(key.toString('hex'));
  }
}

describe('SecretKeyRing', () => {
  it('has the active key first, the previous keys after, de-duplicated by id', () => {
    const a = randomBytes(32);
    const b = randomBytes(32);
    const ring = new SecretKeyRing({ active: b, previous: [a, Buffer.from(b), Buffer.from(a)] });
    expect(ring.activeKeyId).toBe(keyId(b));
    expect(ring.keyIds).toEqual([keyId(b), keyId(a)]);
    expect(ring.previousKeyIds).toEqual([keyId(a)]);
    expect(ring.has(keyId(a))).toBe(true);
    expect(ring.has('0000000000000000')).toBe(false);
    expect(ring.keyFor(keyId(a))?.equals(a)).toBe(true);
    expect(ring.keyFor('0000000000000000')).toBeUndefined();
  });

  it('keeps its own copies of the keys', () => {
    const key = randomBytes(32);
    const original = Buffer.from(key);
    const ring = new SecretKeyRing({ active: key });
    key.fill(0);
    ring.keyFor(ring.activeKeyId)?.fill(0);
    expect(ring.keyFor(ring.activeKeyId)?.equals(original)).toBe(true);
  });

  it('rejects keys that are not 32 bytes', () => {
    expect(() => new SecretKeyRing({ active: randomBytes(31) })).toThrow(EncryptionKeyError);
    expect(() => new SecretKeyRing({ active: randomBytes(32), previous: [randomBytes(64)] })).toThrow(/32-byte Buffer, got 64 bytes/);
  });

  it('prints and serialises as key ids only', () => {
    const active = randomBytes(32);
    const previous = randomBytes(32);
    const ring = new SecretKeyRing({ active, previous: [previous] });
    expect(JSON.parse(JSON.stringify({ ring }))).toEqual({ ring: { activeKeyId: keyId(active), previousKeyIds: [keyId(previous)] } });
    expect(inspect({ ring }, { depth: 5, showHidden: true })).toContain(keyId(active));
    expectNoKeyMaterial(inspect({ ring }, { depth: 5, showHidden: true }), active, previous);
    expect(String(ring)).toBe(`SecretKeyRing { active: ${keyId(active)}, previous: [${keyId(previous)}] }`);
    expectNoKeyMaterial(JSON.stringify(ring), active, previous);
  });
});

describe('SecretKeyRing.fromSettings', () => {
  let dir: string;
  let keyFile: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'switchboard-secrets-'));
    keyFile = join(dir, 'data', 'secrets.key');
  });

  afterEach(() => {
    jest.restoreAllMocks();
    rmSync(dir, { recursive: true, force: true });
  });

  describe('with SECRETS_ENCRYPTION_KEY', () => {
    it('uses it and the previous keys, without touching the key file', () => {
      const active = randomBytes(32);
      const previous = [randomBytes(32), randomBytes(32)];
      const loaded = SecretKeyRing.fromSettings({
        encryptionKey: active.toString('base64'),
        previousKeys: [previous[0]!.toString('hex'), ' ', previous[1]!.toString('base64url'), active.toString('hex')],
        keyFile,
      });
      expect(loaded.source).toBe('environment');
      expect(loaded.keyFile).toBeUndefined();
      expect(loaded.warnings).toEqual([]);
      expect(loaded.ring.activeKeyId).toBe(keyId(active));
      expect(loaded.ring.previousKeyIds).toEqual(previous.map(keyId));
      expect(() => statSync(keyFile)).toThrow(/ENOENT/);
    });

    it('names a bad previous key by position, without its content', () => {
      const bad = randomBytes(16).toString('base64');
      let message = '';
      try {
        SecretKeyRing.fromSettings({ encryptionKey: randomBytes(32).toString('base64'), previousKeys: [randomBytes(32).toString('hex'), bad] });
      } catch (error) {
        message = (error as Error).message;
      }
      expect(message).toMatch(/^SECRETS_PREVIOUS_KEYS entry 2 is base64 of 16 bytes/);
      expect(message).not.toContain(bad);
    });

    it('warns when a leftover key file holds a key the ring cannot open with', () => {
      const fileKey = SecretKeyRing.fromSettings({ keyFile }).ring.activeKeyId;
      const envKey = randomBytes(32).toString('base64');

      const orphaned = SecretKeyRing.fromSettings({ encryptionKey: envKey, keyFile });
      expect(orphaned.warnings).toHaveLength(1);
      expect(orphaned.warnings[0]).toContain(`holds key ${fileKey}`);
      expectNoKeyMaterial(orphaned.warnings[0]!, parseEncryptionKey(readFileSync(keyFile, 'utf8')));

      const listed = SecretKeyRing.fromSettings({ encryptionKey: envKey, previousKeys: [readFileSync(keyFile, 'utf8').trim()], keyFile });
      expect(listed.warnings).toEqual([]);
      expect(listed.ring.previousKeyIds).toEqual([fileKey]);
    });
  });

  describe('with the key file', () => {
    it('creates it once: 32 random bytes in base64, mode 0600, in a directory it creates', () => {
      const loaded = SecretKeyRing.fromSettings({ keyFile, previousKeys: [] });
      expect(loaded.source).toBe('key_file_created');
      expect(loaded.keyFile).toBe(keyFile);
      expect(loaded.warnings).toEqual([]);
      const content = readFileSync(keyFile, 'utf8');
      expect(content).toMatch(/^[A-Za-z0-9+/]{43}=\n$/);
      expect(keyId(parseEncryptionKey(content))).toBe(loaded.ring.activeKeyId);
      if (!isWindows) expect(mode(keyFile)).toBe(0o600);
      // Nothing left behind but the key.
      expect(readdirSync(join(dir, 'data'))).toEqual(['secrets.key']);
    });

    it('reuses it on the next start', () => {
      const first = SecretKeyRing.fromSettings({ keyFile });
      const second = SecretKeyRing.fromSettings({ keyFile });
      expect(second.source).toBe('key_file');
      expect(second.ring.activeKeyId).toBe(first.ring.activeKeyId);
      expect(second.warnings).toEqual([]);
    });

    it('is used when SECRETS_ENCRYPTION_KEY is blank, with the previous keys', () => {
      const previous = randomBytes(32);
      const loaded = SecretKeyRing.fromSettings({ encryptionKey: '  ', previousKeys: [previous.toString('base64')], keyFile });
      expect(loaded.source).toBe('key_file_created');
      expect(loaded.ring.previousKeyIds).toEqual([keyId(previous)]);
    });

    (isWindows ? it.skip : it)('tightens looser permissions to 0600, with a warning', () => {
      const first = SecretKeyRing.fromSettings({ keyFile });
      chmodSync(keyFile, 0o644);
      const loaded = SecretKeyRing.fromSettings({ keyFile });
      expect(loaded.source).toBe('key_file');
      expect(loaded.ring.activeKeyId).toBe(first.ring.activeKeyId);
      expect(mode(keyFile)).toBe(0o600);
      expect(loaded.warnings).toEqual([`key file ${keyFile} had permissions 0644 (readable by other users); tightened to 0600`]);
      expectNoKeyMaterial(loaded.warnings.join('\n'), parseEncryptionKey(readFileSync(keyFile, 'utf8')));
    });

    it('reads a key file another process created before this start', () => {
      const theirs = randomBytes(32);
      realFs.mkdirSync(join(dir, 'data'), { recursive: true });
      writeFileSync(keyFile, `${theirs.toString('hex')}\n`, { mode: 0o600 });
      const loaded = SecretKeyRing.fromSettings({ keyFile });
      expect(loaded.source).toBe('key_file');
      expect(loaded.ring.activeKeyId).toBe(keyId(theirs));
    });

    it('reads the key of a process that created the file between our read and our write (EEXIST)', () => {
      const theirs = randomBytes(32);
      const link = realFs.linkSync;
      const linkSpy = jest.spyOn(realFs, 'linkSync').mockImplementationOnce((existingPath, newPath) => {
        // The other process wins the race just before our exclusive publish.
        writeFileSync(newPath, `${theirs.toString('base64')}\n`, { flag: 'wx', mode: 0o600 });
        link(existingPath, newPath);
      });
      const loaded = SecretKeyRing.fromSettings({ keyFile });
      expect(linkSpy).toHaveBeenCalledTimes(1);
      expect(loaded.source).toBe('key_file');
      expect(loaded.ring.activeKeyId).toBe(keyId(theirs));
      expect(readFileSync(keyFile, 'utf8')).toBe(`${theirs.toString('base64')}\n`);
      expect(readdirSync(join(dir, 'data'))).toEqual(['secrets.key']);
    });

    it('creates the file in place with flag wx on a file system without hard links', () => {
      jest.spyOn(realFs, 'linkSync').mockImplementationOnce(() => {
        throw Object.assign(new Error('EPERM: operation not permitted, link'), { code: 'EPERM' });
      });
      const loaded = SecretKeyRing.fromSettings({ keyFile });
      expect(loaded.source).toBe('key_file_created');
      if (!isWindows) expect(mode(keyFile)).toBe(0o600);
      expect(SecretKeyRing.fromSettings({ keyFile }).ring.activeKeyId).toBe(loaded.ring.activeKeyId);
      expect(readdirSync(join(dir, 'data'))).toEqual(['secrets.key']);
    });

    it('refuses an empty or corrupt key file rather than replacing it, without echoing its content', () => {
      realFs.mkdirSync(join(dir, 'data'), { recursive: true });
      writeFileSync(keyFile, '', { mode: 0o600 });
      jest.spyOn(Atomics, 'wait').mockReturnValue('timed-out'); // skip the wait for a concurrent writer
      expect(() => SecretKeyRing.fromSettings({ keyFile })).toThrow(`key file ${keyFile} is empty`);

      const corrupt = randomBytes(20).toString('hex');
      writeFileSync(keyFile, corrupt);
      let message = '';
      try {
        SecretKeyRing.fromSettings({ keyFile });
      } catch (error) {
        message = (error as Error).message;
      }
      expect(message).toMatch(new RegExp(`^key file .* looks like hex but has 40 hex digits`));
      expect(message).not.toContain(corrupt);
      expect(readFileSync(keyFile, 'utf8')).toBe(corrupt);
    });

    it('needs a key file path when SECRETS_ENCRYPTION_KEY is unset', () => {
      expect(() => SecretKeyRing.fromSettings({ previousKeys: [] })).toThrow(/no encryption key: set SECRETS_ENCRYPTION_KEY/);
    });
  });
});

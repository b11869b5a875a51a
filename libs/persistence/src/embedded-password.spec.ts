import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { embeddedPasswordPath, loadOrCreateEmbeddedPassword } from './embedded-password';

const posixOnly = process.platform === 'win32' ? it.skip : it;

describe('loadOrCreateEmbeddedPassword', () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'switchboard-password-spec-'));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('generates the password once beside the data folder, then reads the same one', () => {
    const path = embeddedPasswordPath(join(root, 'pglite'));
    expect(path).toBe(join(root, 'pglite.password'));
    const password = loadOrCreateEmbeddedPassword(path);
    expect(password).toMatch(/^[0-9a-f]{48}$/);
    expect(readFileSync(path, 'utf8').trim()).toBe(password);
    expect(loadOrCreateEmbeddedPassword(path)).toBe(password);
    expect(readdirSync(root)).toEqual(['pglite.password']); // no temporary file left
  });

  posixOnly('writes it with mode 0600 and tightens a looser one', () => {
    const path = join(root, 'pglite.password');
    loadOrCreateEmbeddedPassword(path);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    chmodSync(path, 0o644);
    loadOrCreateEmbeddedPassword(path);
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  it('replaces an empty file with a new password (PGlite stores none, so nothing is lost)', () => {
    const path = join(root, 'pglite.password');
    writeFileSync(path, '\n');
    expect(loadOrCreateEmbeddedPassword(path)).toMatch(/^[0-9a-f]{48}$/);
  });
});

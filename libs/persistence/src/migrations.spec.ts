import { findProjectRoot, redactConnectionStrings } from './migrations';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

describe('redactConnectionStrings', () => {
  it('removes credentials from any postgres URL and replaces the exact URL given', () => {
    const url = 'postgresql://app:hunter2@db.internal:5432/switchboard?sslmode=require';
    const text = `Error: P1001 Can't reach ${url}\nalso postgres://other:pa55@h/x and postgresql://plain@h/y`;
    const redacted = redactConnectionStrings(text, url);
    expect(redacted).not.toContain('hunter2');
    expect(redacted).not.toContain('pa55');
    expect(redacted).toContain('[DATABASE_URL]');
    expect(redacted).toContain('postgres://[redacted]@h/x');
    expect(redacted).toContain('postgresql://[redacted]@h/y');
  });

  it('leaves text without URLs alone', () => {
    expect(redactConnectionStrings('All migrations have been successfully applied.')).toBe(
      'All migrations have been successfully applied.',
    );
  });
});

describe('findProjectRoot', () => {
  it('finds the folder holding prisma.config.ts and the committed migrations', () => {
    const root = findProjectRoot();
    expect(existsSync(join(root, 'prisma.config.ts'))).toBe(true);
    expect(existsSync(join(root, 'prisma', 'migrations', 'migration_lock.toml'))).toBe(true);
  });
});

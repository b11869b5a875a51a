import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Test, TestingModule } from '@nestjs/testing';
import { Client } from 'pg';
import { DATABASE_CONNECTION, DatabaseConnection } from '../../../libs/persistence/src/database-connection';
import { DatabaseHealth } from '../../../libs/persistence/src/database-health';
import { isRetryableDatabaseError } from '../../../libs/persistence/src/database-errors';
import { DatabaseModule } from '../../../libs/persistence/src/database.module';
import { OrganizationRepository } from '../../../libs/persistence/src/repositories/organization.repository';
import { CallRepository } from '../../../libs/persistence/src/repositories/call.repository';
import { testDatabaseUrl } from '../../support/database';

jest.setTimeout(240_000);

async function boot(options: Parameters<typeof DatabaseModule.forRoot>[0]): Promise<TestingModule> {
  const moduleRef = await Test.createTestingModule({ imports: [DatabaseModule.forRoot(options)] }).compile();
  await moduleRef.init();
  return moduleRef;
}

describe('DatabaseModule', () => {
  it('with DATABASE_URL: migrates (no-op here), injects repositories, reports ready', async () => {
    const moduleRef = await boot({ databaseUrl: testDatabaseUrl(), dataDir: '/nonexistent-unused' });
    try {
      const connection = moduleRef.get<DatabaseConnection>(DATABASE_CONNECTION);
      expect(connection).toMatchObject({ embedded: null, poolMax: 10 });
      await expect(moduleRef.get(DatabaseHealth).ping()).resolves.toBe(true);
      const org = await moduleRef.get(OrganizationRepository).ensure(`module-${Date.now()}`);
      await expect(moduleRef.get(CallRepository).list({ organizationId: org.id, limit: 1 })).resolves.toEqual({
        items: [],
        nextCursor: null,
      });
    } finally {
      await moduleRef.close();
    }
  });

  it('with an unreachable database and migrate: false: boots, and ping() answers false within its timeout', async () => {
    const moduleRef = await boot({ databaseUrl: 'postgresql://nobody:pw@127.0.0.1:1/none', dataDir: '/unused', migrate: false });
    try {
      const startedAt = Date.now();
      await expect(moduleRef.get(DatabaseHealth).ping(500)).resolves.toBe(false);
      expect(Date.now() - startedAt).toBeLessThan(6_000);
      // The error a repository throws here is classified as worth retrying.
      const error = await moduleRef.get(OrganizationRepository).findById('00000000-0000-4000-8000-000000000000').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(Error);
      expect(isRetryableDatabaseError(error)).toBe(true);
    } finally {
      await moduleRef.close();
    }
  });

  it('without DATABASE_URL: serves an embedded PGlite under <dataDir>/pglite with a pool of one, and stops it on close', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'switchboard-module-spec-'));
    const moduleRef = await boot({ dataDir });
    let port: number | undefined;
    try {
      const connection = moduleRef.get<DatabaseConnection>(DATABASE_CONNECTION);
      expect(connection.poolMax).toBe(1);
      expect(connection.embedded?.dataDir).toBe(join(dataDir, 'pglite'));
      port = connection.embedded?.port;
      await expect(moduleRef.get(DatabaseHealth).ping()).resolves.toBe(true);
      await expect(moduleRef.get(OrganizationRepository).ensure('embedded via module')).resolves.toMatchObject({
        name: 'embedded via module',
      });
    } finally {
      await moduleRef.close();
    }
    const client = new Client({ connectionString: `postgresql://postgres@127.0.0.1:${port}/postgres`, connectionTimeoutMillis: 2_000 });
    client.on('error', () => undefined);
    await expect(client.connect()).rejects.toThrow();
    rmSync(dataDir, { recursive: true, force: true });
  });
});

import { openDatabaseConnection, PrismaService, TransactionMisuseError } from '@switchboard/persistence';
import { createTestPrisma, isEmbeddedTestDatabase, testDatabaseUrl } from '../../support/database';

/**
 * Nothing may hold a pooled connection for ever. Found under a 250-call burst: every connection of
 * the pool sat `idle in transaction`, every later request hung, and the server never recovered.
 * These tests run a pool of two against the real Postgres and show each way out:
 * - a transaction callback that asks the pool for a second connection is refused at once;
 * - a transaction that stops issuing queries is rolled back by Prisma's timeout, and its connection
 *   serves the next request;
 * - a session the server ends (idle_in_transaction_session_timeout) gives its pool slot back, so
 *   dead sessions never pile up in the pool.
 */
const realPostgres = !isEmbeddedTestDatabase();
const describeReal = realPostgres ? describe : describe.skip;

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

describe('Transaction bounds (pool of 2)', () => {
  it('refuses a query on another pooled connection from inside a transaction callback, at once', async () => {
    const prisma = createTestPrisma(2);
    try {
      const started = Date.now();
      const misuse = prisma.$transaction(async (tx) => {
        await tx.$queryRaw`SELECT 1`;
        // The mistake: `prisma` rather than `tx`. Under load this waits for a connection that only
        // another such transaction could give back.
        return prisma.organization.count();
      });
      await expect(misuse).rejects.toThrow(/another pooled connection while a transaction callback is running/);
      expect(Date.now() - started).toBeLessThan(2000);
      // A nested transaction is the same mistake.
      await expect(prisma.$transaction(async () => prisma.$transaction(async (tx) => tx.organization.count()))).rejects.toThrow(TransactionMisuseError);
      // Work the callback leaves running after it returned is not inside the transaction any more.
      let later: Promise<number> | undefined;
      await prisma.$transaction(async (tx) => {
        await tx.$queryRaw`SELECT 1`;
        later = sleep(50).then(() => prisma.organization.count());
      });
      await expect(later).resolves.toEqual(expect.any(Number));
    } finally {
      await prisma.$disconnect();
    }
  });

  describeReal('against a real Postgres', () => {
    let prisma: PrismaService;
    afterEach(async () => prisma?.$disconnect());

    it('applies the session bounds to every connection of an external database', async () => {
      prisma = new PrismaService(await openDatabaseConnection({ databaseUrl: testDatabaseUrl(), dataDir: '.', migrate: false }));
      const rows = await prisma.$queryRaw<Array<{ idle: string; lock: string; statement: string }>>`
        SELECT current_setting('idle_in_transaction_session_timeout') AS idle,
               current_setting('lock_timeout') AS lock,
               current_setting('statement_timeout') AS statement`;
      expect(rows[0]).toEqual({ idle: '20s', lock: '10s', statement: '30s' });
    });

    it('rolls back a transaction that went quiet, and its connection serves the next requests', async () => {
      prisma = new PrismaService({ connectionString: testDatabaseUrl(), poolMax: 2, acquireTimeoutMs: 2000, transactionTimeouts: { maxWait: 1000, timeout: 500 } });
      const wedged = [1, 2].map(() =>
        prisma.$transaction(async (tx) => {
          await tx.$queryRaw`SELECT 1`;
          await sleep(1500);
          return tx.$queryRaw`SELECT 2`;
        }),
      );
      await sleep(900);
      // Both connections were held by the wedged transactions; the timeout gave them back.
      const started = Date.now();
      await expect(Promise.all([prisma.organization.count(), prisma.organization.count()])).resolves.toHaveLength(2);
      expect(Date.now() - started).toBeLessThan(500);
      const outcomes = await Promise.allSettled(wedged);
      for (const outcome of outcomes) expect(outcome.status === 'rejected' && String(outcome.reason)).toMatch(/expired transaction/);
    });

    it('gives a slot back when the server ended the session (idle in transaction), so the pool never fills with dead sessions', async () => {
      prisma = new PrismaService({
        connectionString: testDatabaseUrl(),
        poolMax: 2,
        acquireTimeoutMs: 2000,
        sessionBounds: { idleInTransactionMs: 300, lockTimeoutMs: 10_000, statementTimeoutMs: 30_000 },
        transactionTimeouts: { maxWait: 2000, timeout: 10_000 },
      });
      for (let round = 0; round < 3; round++) {
        const ended = [1, 2].map(() =>
          prisma.$transaction(async (tx) => {
            await tx.$queryRaw`SELECT 1`;
            await sleep(800);
            return tx.$queryRaw`SELECT 2`;
          }),
        );
        const outcomes = await Promise.allSettled(ended);
        expect(outcomes.map((outcome) => outcome.status)).toEqual(['rejected', 'rejected']);
      }
      // Six sessions were ended under a pool of two: both slots are still usable.
      const started = Date.now();
      await expect(Promise.all([prisma.organization.count(), prisma.organization.count()])).resolves.toHaveLength(2);
      expect(Date.now() - started).toBeLessThan(1000);
    });
  });
});

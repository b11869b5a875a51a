import { openDatabaseConnection, PrismaService, TransactionMisuseError } from '@switchboard/persistence';
import { Client } from 'pg';
import { isEmbeddedTestDatabase, testDatabaseUrl } from '../../support/database';
import { eventually } from '../../support/eventually';

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

/** A promise and the function that resolves it: the test says when a transaction goes on. */
function gate(): { opened: Promise<void>; open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

describe('Transaction bounds (pool of 2)', () => {
  it('refuses a query on another pooled connection from inside a transaction callback, at once', async () => {
    // One connection, and no bound on waiting for it: a query that waited for a connection instead
    // of being refused would wait for the one its own transaction holds, for ever. Its refusal
    // arriving at all is what shows it came at once.
    const prisma = new PrismaService({ connectionString: testDatabaseUrl(), poolMax: 1, acquireTimeoutMs: 0 });
    try {
      const misuse = prisma.$transaction(async (tx) => {
        await tx.$queryRaw`SELECT 1`;
        // The mistake: `prisma` rather than `tx`. Under load this waits for a connection that only
        // another such transaction could give back.
        return prisma.organization.count();
      });
      await expect(misuse).rejects.toThrow(/another pooled connection while a transaction callback is running/);
      // A nested transaction is the same mistake.
      await expect(prisma.$transaction(async () => prisma.$transaction(async (tx) => tx.organization.count()))).rejects.toThrow(TransactionMisuseError);
      // Work the callback leaves running after it returned is not inside the transaction any more.
      let later: Promise<number> | undefined;
      const returned = gate();
      await prisma.$transaction(async (tx) => {
        await tx.$queryRaw`SELECT 1`;
        later = returned.opened.then(() => prisma.organization.count());
      });
      returned.open();
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
      // No bound on waiting for a connection: only the transactions' timeout can give one back.
      // Named, so the test can see its own sessions among those of the files running beside it.
      const applicationName = `transaction-bounds-quiet-${process.pid}`;
      const url = new URL(testDatabaseUrl());
      url.searchParams.set('application_name', applicationName);
      prisma = new PrismaService({ connectionString: url.toString(), poolMax: 2, acquireTimeoutMs: 0, transactionTimeouts: { maxWait: 1000, timeout: 500 } });
      const quiet = gate();
      const holding = [gate(), gate()];
      const wedged = holding.map((held) =>
        prisma.$transaction(async (tx) => {
          await tx.$queryRaw`SELECT 1`;
          held.open();
          await quiet.opened;
          return tx.$queryRaw`SELECT 2`;
        }),
      );
      await Promise.all(holding.map((held) => held.opened));
      // Both connections are held by the wedged transactions, quiet until these requests are
      // answered: answered at all, they were served by connections the timeout gave back.
      await expect(Promise.all([prisma.organization.count(), prisma.organization.count()])).resolves.toHaveLength(2);
      // One connection given back serves both requests, so the second transaction's timeout may
      // not have come yet: the callbacks go on once neither session is still in its transaction.
      const observer = new Client({ connectionString: testDatabaseUrl() });
      await observer.connect();
      try {
        await eventually(
          async () => (await observer.query<{ open: number }>(`SELECT count(*)::int AS open FROM pg_stat_activity WHERE application_name = $1 AND state LIKE 'idle in transaction%'`, [applicationName])).rows[0]!.open,
          (open) => open === 0,
          10_000,
        );
      } finally {
        await observer.end();
      }
      quiet.open();
      const outcomes = await Promise.allSettled(wedged);
      for (const outcome of outcomes) expect(outcome.status === 'rejected' && String(outcome.reason)).toMatch(/expired transaction/);
    });

    it('gives a slot back when the server ended the session (idle in transaction), so the pool never fills with dead sessions', async () => {
      // Watches the sessions from outside the pool under test (its own connection, no guard).
      const observer = new Client({ connectionString: testDatabaseUrl() });
      await observer.connect();
      const sessionsWithPid = async (pid: number) => (await observer.query<{ alive: number }>('SELECT count(*)::int AS alive FROM pg_stat_activity WHERE pid = $1', [pid])).rows[0]!.alive;
      try {
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
              const [session] = await tx.$queryRaw<Array<{ pid: number }>>`SELECT pg_backend_pid() AS pid`;
              // Quiet until the server has ended the session (its idle-in-transaction timeout).
              await eventually(() => sessionsWithPid(session!.pid), (alive) => alive === 0);
              return tx.$queryRaw`SELECT 2`;
            }),
          );
          const outcomes = await Promise.allSettled(ended);
          expect(outcomes.map((outcome) => outcome.status)).toEqual(['rejected', 'rejected']);
        }
        // Six sessions were ended under a pool of two: no slot is still lent to one, and both serve.
        expect(prisma.pool.totalCount - prisma.pool.idleCount).toBe(0);
        await expect(Promise.all([prisma.organization.count(), prisma.organization.count()])).resolves.toHaveLength(2);
      } finally {
        await observer.end();
      }
    });
  });
});

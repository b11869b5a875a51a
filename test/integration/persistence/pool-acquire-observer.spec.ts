import { PrismaService } from '@switchboard/persistence';
import { testDatabaseUrl } from '../../support/database';

/**
 * What /metrics shows of the database pool comes from here: every wait for a pooled connection is
 * seen (Prisma's queries borrow through the pool), and a wait that ends without one says so.
 */
describe('PrismaService: waits for a pooled connection are observed', () => {
  let prisma: PrismaService;

  beforeAll(() => {
    prisma = new PrismaService({ connectionString: testDatabaseUrl(), poolMax: 1, acquireTimeoutMs: 300 });
  });
  afterAll(() => prisma.$disconnect());

  it('reports each wait, and a wait that timed out as not acquired', async () => {
    const waits: Array<{ waitMs: number; acquired: boolean }> = [];
    const stop = prisma.observeConnectionAcquires((waitMs, acquired) => waits.push({ waitMs, acquired }));

    await prisma.$queryRaw`SELECT 1`;
    expect(waits.length).toBeGreaterThanOrEqual(1);
    expect(waits.every((wait) => wait.acquired)).toBe(true);

    // The pool's only connection is held: the next query waits the acquire timeout and gets none.
    const held = await prisma.pool.connect();
    waits.length = 0;
    try {
      await expect(prisma.$queryRaw`SELECT 1`).rejects.toThrow();
    } finally {
      held.release();
    }
    expect(waits).toEqual([{ waitMs: expect.any(Number), acquired: false }]);
    expect(waits[0]!.waitMs).toBeGreaterThanOrEqual(250);

    stop();
    await prisma.$queryRaw`SELECT 1`;
    expect(waits).toHaveLength(1);
  });
});

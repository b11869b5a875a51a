import { Injectable } from '@nestjs/common';
import { PrismaService } from './prisma.service';

const DEFAULT_PING_TIMEOUT_MS = 1_000;

/** Readiness probe for GET /health/ready: can we run a query right now? */
@Injectable()
export class DatabaseHealth {
  constructor(private readonly prisma: PrismaService) {}

  /** True when `SELECT 1` completes within `timeoutMs`; never throws. */
  async ping(timeoutMs = DEFAULT_PING_TIMEOUT_MS): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs);
    });
    const query = this.prisma.$queryRaw`SELECT 1`.then(
      () => true,
      () => false,
    );
    try {
      return await Promise.race([query, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }
}

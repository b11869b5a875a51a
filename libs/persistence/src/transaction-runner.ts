import { Injectable } from '@nestjs/common';
import type { Prisma } from './generated/prisma/client';
import { PrismaService } from './prisma.service';

/** The handle a transaction's queries run on; repositories take it as their `db` argument. */
export type Tx = Prisma.TransactionClient;

/**
 * Runs a unit of work in one database transaction. Services own transactions (they decide what must
 * commit together); repositories only run queries on the handle they are given. The callback must
 * run its own queries and nothing else: awaiting another pooled connection, a network call or a
 * timer inside it would hold a connection (and its locks) hostage. Bounded by PrismaService's
 * transaction options (waiting for a connection, and the whole transaction).
 */
@Injectable()
export class TransactionRunner {
  constructor(private readonly prisma: PrismaService) {}

  run<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    return this.prisma.$transaction(work);
  }
}

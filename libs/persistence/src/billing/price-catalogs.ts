import { DEFAULT_PRICES, priceCatalogPrices, type PriceCatalogPrices } from '@switchboard/billing';
import { Prisma } from '../generated/prisma/client';

/** The currency of the deployment default catalog seeded on first use. */
export const DEFAULT_CATALOG_CURRENCY = 'USD';
/** The first default version is in force from the start of time, so every call has a catalog. */
const BEGINNING_OF_TIME = new Date(0);

/**
 * Who set a catalog version. 'operator': the prices calls are billed with (the deployment default, or
 * an organization's prices the operator set). 'organization': a tenant's own prices, for its own
 * reports (what its calls would cost at its prices); they never change what it is billed.
 */
export type CatalogSetter = 'operator' | 'organization';

export interface PriceCatalogRecord {
  id: string;
  /** Null: the deployment default. */
  organizationId: string | null;
  setBy: CatalogSetter;
  version: number;
  currency: string;
  prices: PriceCatalogPrices;
  effectiveFrom: Date;
  createdAt: Date;
}

type Db = Pick<Prisma.TransactionClient, 'priceCatalog' | '$executeRaw' | '$queryRaw'>;

export function toPriceCatalogRecord(row: {
  id: string;
  organizationId: string | null;
  setBy: string;
  version: number;
  currency: string;
  prices: unknown;
  effectiveFrom: Date;
  createdAt: Date;
}): PriceCatalogRecord {
  // Stored prices were validated on the way in; parsing again keeps a hand-edited row from pricing calls silently wrong.
  return { ...row, setBy: row.setBy === 'operator' ? 'operator' : 'organization', prices: priceCatalogPrices.parse(row.prices) };
}

/**
 * The catalog a call that started at `at` is billed with: the latest version the operator set for
 * the organization in force then, else the deployment default's. Never a version the organization
 * set itself (those are for its own reports). The default is seeded (version 1, in force since
 * forever) the first time it is needed, so pricing never finds no catalog.
 */
export async function catalogInForce(db: Db, organizationId: string, at: Date): Promise<PriceCatalogRecord> {
  // One raw statement, not two ORM queries: every call end and every budget check asks this, and
  // an ORM query costs the event loop ~0.6 ms in Prisma's query compiler (measured), raw ~0.2 ms.
  const rows = await db.$queryRaw<Parameters<typeof toPriceCatalogRecord>[0][]>(Prisma.sql`
    SELECT id, organization_id AS "organizationId", set_by AS "setBy", version, currency, prices,
           effective_from AS "effectiveFrom", created_at AS "createdAt"
    FROM price_catalogs
    WHERE effective_from <= ${at}::timestamptz
      AND ((organization_id = ${organizationId}::uuid AND set_by = 'operator') OR organization_id IS NULL)
    ORDER BY (organization_id IS NULL), effective_from DESC, version DESC
    LIMIT 1`);
  const found = rows[0];
  return found ? toPriceCatalogRecord(found) : defaultCatalogInForce(db, at);
}

/** The organization's own prices in force at `at` (its reports), or null when it set none. */
export async function organizationCatalogInForce(db: Db, organizationId: string, at: Date): Promise<PriceCatalogRecord | null> {
  const found = await db.priceCatalog.findFirst({
    where: { organizationId, setBy: 'organization', effectiveFrom: { lte: at } },
    orderBy: [{ effectiveFrom: 'desc' }, { version: 'desc' }],
  });
  return found ? toPriceCatalogRecord(found) : null;
}

export async function defaultCatalogInForce(db: Db, at: Date): Promise<PriceCatalogRecord> {
  const found = await db.priceCatalog.findFirst({
    where: { organizationId: null, effectiveFrom: { lte: at } },
    orderBy: [{ effectiveFrom: 'desc' }, { version: 'desc' }],
  });
  if (found) return toPriceCatalogRecord(found);
  await seedDefaultCatalog(db);
  return toPriceCatalogRecord(
    await db.priceCatalog.findFirstOrThrow({ where: { organizationId: null }, orderBy: [{ effectiveFrom: 'asc' }, { version: 'asc' }] }),
  );
}

/** Inserts default version 1 unless it exists (race-safe: two processes may seed at once). */
export async function seedDefaultCatalog(db: Pick<Prisma.TransactionClient, '$executeRaw'>, prices: PriceCatalogPrices = DEFAULT_PRICES): Promise<void> {
  await db.$executeRaw(Prisma.sql`
    INSERT INTO price_catalogs (id, organization_id, version, currency, prices, effective_from, set_by)
    VALUES (gen_random_uuid(), NULL, 1, ${DEFAULT_CATALOG_CURRENCY}, ${JSON.stringify(prices)}::jsonb, ${BEGINNING_OF_TIME.toISOString()}::timestamptz, 'operator')
    ON CONFLICT DO NOTHING`);
}

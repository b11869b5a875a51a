import { currencyCode, priceCatalogPrices } from '@switchboard/billing';
import { z } from 'zod';
import { isoTimestamp } from '../../common/query-timestamps';
import { createApiDto } from '../../openapi/api-schemas';

/** A new catalog version: the operator's (billing) or an organization's own (its reports). */
export const newCatalogVersionBody = z.strictObject({
  prices: priceCatalogPrices,
  /** Must be the currency the catalog's earlier versions use (absent: that one). */
  currency: currencyCode.optional(),
  /** Default: now. Must not be in the past. */
  effectiveFrom: isoTimestamp.optional(),
});
export class NewCatalogVersionBodyDto extends createApiDto(newCatalogVersionBody) {}

import type { Prisma } from '../generated/prisma/client';

/** JSON as read back from a jsonb column. */
export type JsonValue = Prisma.JsonValue;
/** JSON accepted for a jsonb column (no top-level null: use an object or array). */
export type InputJsonValue = Prisma.InputJsonValue;

import { API_KEY_SCOPES, BOOTSTRAP_API_KEY_NAME } from '@switchboard/persistence';
import { z } from 'zod';

export const createApiKeyBody = z.strictObject({
  name: z
    .string()
    .trim()
    .min(1)
    .max(200)
    // Restarting the server revokes every other key with this name (it rotates ADMIN_API_KEY).
    .refine((name) => name !== BOOTSTRAP_API_KEY_NAME, { message: `"${BOOTSTRAP_API_KEY_NAME}" is reserved.` }),
  scopes: z
    .array(z.enum(API_KEY_SCOPES))
    .min(1)
    .refine((scopes) => new Set(scopes).size === scopes.length, { message: 'Scopes must not repeat.' }),
});
export type CreateApiKeyBody = z.infer<typeof createApiKeyBody>;

export const apiKeyIdParam = z.string().min(1).max(64);

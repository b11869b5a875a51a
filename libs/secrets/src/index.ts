/** The sealing layer of the per-organization secrets vault (node:crypto only; no Nest, no database). */
export { ENCRYPTION_KEY_BYTES, EncryptionKeyError, formatEncryptionKey, keyId, parseEncryptionKey } from './encryption-key';
export { DEFAULT_KEY_FILE_NAME, SecretKeyRing } from './key-ring';
export type { KeyRingSettings, KeySource, LoadedKeyRing, SecretKeys } from './key-ring';
export {
  DEFAULT_SECRET_PURPOSE,
  NONCE_BYTES,
  TAG_BYTES,
  SecretOpenError,
  associatedData,
  needsReseal,
  open,
  reseal,
  seal,
} from './sealed-value';
export type { SealedValue, SealedValueInput, SecretOpenFailure } from './sealed-value';
export { SECRET_HINT_MIN_LENGTH, secretHint } from './secret-hint';
export { SECRET_NAME_PATTERN, SECRET_NAME_RULE } from './secret-name';
export * from './webhook-signature';

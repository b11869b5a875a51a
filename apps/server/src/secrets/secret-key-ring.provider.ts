import { join } from 'node:path';
import { Logger, type Provider } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '@switchboard/config';
import { DEFAULT_KEY_FILE_NAME, SecretKeyRing, type LoadedKeyRing } from '@switchboard/secrets';

/** Nest token of the process's SecretKeyRing (the keys that seal organizations' secrets). */
export const SECRET_KEY_RING = Symbol('SECRET_KEY_RING');

/**
 * The key ring from SECRETS_ENCRYPTION_KEY (+ SECRETS_PREVIOUS_KEYS), or from the key file generated
 * once into DATA_DIR when no key is configured. Logs where the key came from (never the key).
 */
export function loadSecretKeyRing(config: AppConfig, logger: Pick<Logger, 'log' | 'warn'> = new Logger('SecretKeyRing')): LoadedKeyRing {
  const loaded = SecretKeyRing.fromSettings({
    encryptionKey: config.secrets.encryptionKey,
    previousKeys: config.secrets.previousKeys,
    keyFile: join(config.database.dataDir, DEFAULT_KEY_FILE_NAME),
  });
  const { ring, source, keyFile } = loaded;
  if (source === 'key_file_created') {
    logger.warn(`generated the secrets encryption key into ${keyFile} (mode 0600): back it up with the database, or set SECRETS_ENCRYPTION_KEY`);
  } else {
    logger.log(`secrets are sealed with key ${ring.activeKeyId} (from ${source === 'environment' ? 'SECRETS_ENCRYPTION_KEY' : keyFile})${ring.previousKeyIds.length > 0 ? `; previous keys: ${ring.previousKeyIds.join(', ')}` : ''}`);
  }
  for (const warning of loaded.warnings) logger.warn(warning);
  return loaded;
}

export const secretKeyRingProvider: Provider = {
  provide: SECRET_KEY_RING,
  inject: [APP_CONFIG],
  useFactory: (config: AppConfig): SecretKeyRing => loadSecretKeyRing(config).ring,
};

import { ConfigValidationError, loadAppConfig } from './app-config';

describe('loadAppConfig', () => {
  it('applies documented defaults to an empty environment', () => {
    const config = loadAppConfig({});
    expect(config.port).toBe(3000);
    expect(config.publicBaseUrl).toBe('http://localhost:3000');
    expect(config.database).toEqual({ url: undefined, dataDir: './data', migrateOnStart: true, poolMax: 10 });
    expect(config.logLevel).toBe('info');
    expect(config.twilio.authToken).toBeUndefined();
    expect(config.inference).toEqual({ modelsDir: './models', device: 'auto', workers: undefined, batchMaxDelayMs: 2 });
  });

  it('reads every variable and strips the trailing slash of PUBLIC_BASE_URL', () => {
    const config = loadAppConfig({
      PORT: '8080',
      PUBLIC_BASE_URL: 'https://voice.example.com/',
      TWILIO_ACCOUNT_SID: 'AC' + 'a'.repeat(32),
      TWILIO_AUTH_TOKEN: 'x'.repeat(32),
      DATABASE_URL: 'postgresql://postgres@127.0.0.1:5432/app',
      DATA_DIR: '/var/lib/switchboard',
      ADMIN_API_KEY: 'k'.repeat(40),
      LOG_LEVEL: 'debug',
    });
    expect(config.port).toBe(8080);
    expect(config.publicBaseUrl).toBe('https://voice.example.com');
    expect(config.database.url).toBe('postgresql://postgres@127.0.0.1:5432/app');
    expect(config.database.dataDir).toBe('/var/lib/switchboard');
    expect(config.logLevel).toBe('debug');
  });

  it('treats empty strings as unset', () => {
    expect(loadAppConfig({ DATABASE_URL: '', ADMIN_API_KEY: '' }).database.url).toBeUndefined();
  });

  it('lists every bad variable in one error and never echoes their values', () => {
    const secret = 'short-secret';
    let error: unknown;
    try {
      loadAppConfig({
        PORT: 'eighty',
        PUBLIC_BASE_URL: 'ftp://nope',
        TWILIO_ACCOUNT_SID: 'XX123',
        TWILIO_AUTH_TOKEN: secret,
        DATABASE_URL: 'mysql://x',
        ADMIN_API_KEY: secret,
        OPERATOR_API_KEY: secret,
        LOG_LEVEL: 'loud',
        INFERENCE_DEVICE: 'tpu',
      });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigValidationError);
    const message = (error as Error).message;
    for (const name of ['PORT', 'PUBLIC_BASE_URL', 'TWILIO_ACCOUNT_SID', 'TWILIO_AUTH_TOKEN', 'DATABASE_URL', 'ADMIN_API_KEY', 'OPERATOR_API_KEY', 'LOG_LEVEL', 'INFERENCE_DEVICE']) {
      expect(message).toContain(`${name}:`);
    }
    expect((error as ConfigValidationError).problems).toHaveLength(9);
    expect(message).not.toContain(secret);
  });

  it('requires Twilio and admin settings in production', () => {
    expect(() => loadAppConfig({ NODE_ENV: 'production' })).toThrow(
      /PUBLIC_BASE_URL: is required[\s\S]*TWILIO_AUTH_TOKEN: is required[\s\S]*ADMIN_API_KEY: is required/,
    );
  });
});

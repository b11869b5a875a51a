import { ConfigValidationError, loadAppConfig } from './app-config';

describe('loadAppConfig', () => {
  it('applies documented defaults to an empty environment', () => {
    const config = loadAppConfig({});
    expect(config.port).toBe(3000);
    expect(config.publicBaseUrl).toBe('http://localhost:3000');
    expect(config.database).toEqual({ url: undefined, dataDir: './data', migrateOnStart: true, poolMax: 10 });
    expect(config.logLevel).toBe('info');
    expect(config.twilio.authToken).toBeUndefined();
    expect(config.inference).toEqual({ modelsDir: './models', device: 'auto', modelDevices: {}, modelPrecisions: {}, workers: undefined, batchMaxDelayMs: 2, maxUtilisation: 0.8 });
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

  it("budgets an organization's requests at five keys' worth unless set, and caps its API keys at 50", () => {
    expect(loadAppConfig({}).rateLimit).toEqual({ requests: 600, anonymousRequests: 60, organizationRequests: 3000, windowMs: 60_000 });
    expect(loadAppConfig({ RATE_LIMIT_REQUESTS: '10' }).rateLimit.organizationRequests).toBe(50);
    expect(loadAppConfig({ RATE_LIMIT_ORGANIZATION_REQUESTS: '70' }).rateLimit.organizationRequests).toBe(70);
    expect(loadAppConfig({}).maxApiKeysPerOrganization).toBe(50);
    expect(loadAppConfig({ MAX_API_KEYS_PER_ORG: '3' }).maxApiKeysPerOrganization).toBe(3);
    expect(() => loadAppConfig({ MAX_API_KEYS_PER_ORG: '0' })).toThrow(ConfigValidationError);
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

  it('accepts webgpu as INFERENCE_DEVICE', () => {
    expect(loadAppConfig({ INFERENCE_DEVICE: 'webgpu' }).inference.device).toBe('webgpu');
  });

  it('reads INFERENCE_MODEL_DEVICES as model=provider pins, ignoring blanks and spacing', () => {
    const config = loadAppConfig({ INFERENCE_MODEL_DEVICES: ' smart-turn-v3.2=cpu, whisper-base.en = WebGPU,,silero-vad-v5=cuda,' });
    expect(config.inference.modelDevices).toEqual({ 'smart-turn-v3.2': 'cpu', 'whisper-base.en': 'webgpu', 'silero-vad-v5': 'cuda' });
    expect(loadAppConfig({ INFERENCE_MODEL_DEVICES: '' }).inference.modelDevices).toEqual({});
  });

  it.each([
    ['an unknown provider', 'whisper-base.en=gpu', /INFERENCE_MODEL_DEVICES: entry "whisper-base\.en=gpu": unknown provider "gpu" \(expected cpu, cuda, webgpu\)/],
    ['auto, which is no provider', 'whisper-base.en=auto', /unknown provider "auto"/],
    ["a missing '='", 'smart-turn-v3.2', /INFERENCE_MODEL_DEVICES: entry "smart-turn-v3\.2" has no '=' \(expected model=provider\)/],
    ['an empty model name', '=cpu', /INFERENCE_MODEL_DEVICES: entry "=cpu" has no model name/],
    ['a model pinned twice', 'a=cpu,a=cuda', /INFERENCE_MODEL_DEVICES: model "a" is pinned more than once/],
  ])('rejects INFERENCE_MODEL_DEVICES with %s, naming the entry', (_label, value, message) => {
    expect(() => loadAppConfig({ INFERENCE_MODEL_DEVICES: value })).toThrow(message);
  });

  it('reads INFERENCE_MODEL_PRECISION as model=precision settings, and names a bad entry', () => {
    expect(loadAppConfig({ INFERENCE_MODEL_PRECISION: 'whisper-base.en=INT8, kokoro-82m-v1.0=fp16,' }).inference.modelPrecisions).toEqual({ 'whisper-base.en': 'int8', 'kokoro-82m-v1.0': 'fp16' });
    expect(loadAppConfig({}).inference.modelPrecisions).toEqual({});
    expect(() => loadAppConfig({ INFERENCE_MODEL_PRECISION: 'whisper-base.en=q4' })).toThrow(/INFERENCE_MODEL_PRECISION: entry "whisper-base\.en=q4": unknown precision "q4" \(expected fp32, fp16, int8\)/);
    expect(() => loadAppConfig({ INFERENCE_MODEL_PRECISION: 'a=int8,a=fp16' })).toThrow(/model "a" is given a precision more than once/);
  });

  it('lists every bad INFERENCE_MODEL_DEVICES entry at once', () => {
    let error: unknown;
    try {
      loadAppConfig({ INFERENCE_MODEL_DEVICES: 'a=tpu,b,c=cpu' });
    } catch (caught) {
      error = caught;
    }
    expect((error as ConfigValidationError).problems).toEqual([
      'INFERENCE_MODEL_DEVICES: entry "a=tpu": unknown provider "tpu" (expected cpu, cuda, webgpu)',
      `INFERENCE_MODEL_DEVICES: entry "b" has no '=' (expected model=provider)`,
    ]);
  });

  it('requires Twilio and admin settings in production', () => {
    expect(() => loadAppConfig({ NODE_ENV: 'production' })).toThrow(
      /PUBLIC_BASE_URL: is required[\s\S]*TWILIO_AUTH_TOKEN: is required[\s\S]*ADMIN_API_KEY: is required/,
    );
  });
});

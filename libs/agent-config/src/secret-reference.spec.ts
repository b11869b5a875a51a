import { operatorKeyEndpointProblem, resolveOperatorKey, SecretReferenceError } from './secret-reference';

const env: NodeJS.ProcessEnv = {
  OPENAI_API_KEY: 'sk-operator-key-value',
  DATABASE_URL: 'postgres://user:database-password@db/x',
  SWITCHBOARD_SECRET_BOOKING: 'old-style-secret',
};

describe('the operator key (apiKeyEnv)', () => {
  it('is sent to the provider\'s own endpoint: no url, or a url on OpenAI\'s origin', () => {
    expect(resolveOperatorKey('OPENAI_API_KEY', undefined, env)).toBe('sk-operator-key-value');
    expect(resolveOperatorKey('OPENAI_API_KEY', 'https://api.openai.com/v1', env)).toBe('sk-operator-key-value');
    expect(resolveOperatorKey('OPENAI_API_KEY', 'wss://api.openai.com/v1/realtime', env)).toBe('sk-operator-key-value');
    expect(operatorKeyEndpointProblem(undefined)).toBeUndefined();
  });

  it.each([
    'http://127.0.0.1:8000/v1',
    'https://tenant.example.com/v1',
    'https://api.openai.com.tenant.example/v1',
    'http://api.openai.com/v1',
    'https://user:pw@api.openai.com/v1',
    'wss://realtime.tenant.example/v1/realtime',
    'not a url',
  ])('is never paired with another endpoint: %s', (url) => {
    expect(operatorKeyEndpointProblem(url)).toMatch(/only sent to the provider's own endpoint .*POST \/v1\/secrets/);
    expect(() => resolveOperatorKey('OPENAI_API_KEY', url, env)).toThrow(SecretReferenceError);
  });

  it.each(['DATABASE_URL', 'ADMIN_API_KEY', 'SWITCHBOARD_SECRET_BOOKING', 'OPENAI_API_KEY_2', 'openai_api_key'])('names only operator provider keys, never %s', (name) => {
    expect(() => resolveOperatorKey(name, undefined, env)).toThrow(/is not allowed: only OPENAI_API_KEY; store the value with POST \/v1\/secrets/);
  });

  it('says when the operator did not set it, naming the variable and never a value', () => {
    expect(() => resolveOperatorKey('OPENAI_API_KEY', undefined, {})).toThrow('the operator has not set OPENAI_API_KEY on this server');
    try {
      resolveOperatorKey('OPENAI_API_KEY', 'https://evil.example/v1', env);
    } catch (error) {
      expect((error as Error).message).not.toContain('sk-operator-key-value');
    }
  });
});

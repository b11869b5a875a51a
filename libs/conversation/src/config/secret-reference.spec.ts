import { isAllowedSecretName, resolveSecret, SecretReferenceError } from './secret-reference';

const env: NodeJS.ProcessEnv = {
  SWITCHBOARD_SECRET_BOOKING: 'booking-signing-secret-value',
  OPENAI_API_KEY: 'sk-test-openai-value',
  DATABASE_URL: 'postgres://user:db-password-value@localhost/db',
  ADMIN_API_KEY: 'admin-key-value',
  SWITCHBOARD_SECRET_EMPTY: '',
};

function thrown(run: () => unknown): Error {
  try {
    run();
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a throw');
}

describe('resolveSecret', () => {
  it('resolves SWITCHBOARD_SECRET_* names and OPENAI_API_KEY', () => {
    expect(resolveSecret('SWITCHBOARD_SECRET_BOOKING', env)).toBe('booking-signing-secret-value');
    expect(resolveSecret('OPENAI_API_KEY', env)).toBe('sk-test-openai-value');
  });

  it.each(['DATABASE_URL', 'ADMIN_API_KEY', 'TWILIO_AUTH_TOKEN', 'OPENAI_API_KEY_2', 'SWITCHBOARD_SECRET_', 'switchboard_secret_x', 'SWITCHBOARD_SECRET_a'])(
    'refuses %s, naming it and never printing any value',
    (name) => {
      const error = thrown(() => resolveSecret(name, env));
      expect(error).toBeInstanceOf(SecretReferenceError);
      expect(error.message).toContain(`"${name}" is not allowed`);
      for (const value of Object.values(env)) if (value) expect(error.message).not.toContain(value);
    },
  );

  it('names a missing or empty variable without printing values', () => {
    expect(() => resolveSecret('SWITCHBOARD_SECRET_MISSING', env)).toThrow('environment variable SWITCHBOARD_SECRET_MISSING is not set');
    expect(() => resolveSecret('SWITCHBOARD_SECRET_EMPTY', env)).toThrow('environment variable SWITCHBOARD_SECRET_EMPTY is not set');
  });

  it('keeps a hostile name short and printable in the message', () => {
    const message = thrown(() => resolveSecret('X'.repeat(500) + '\n\u0000', env)).message;
    expect(message.length).toBeLessThan(300);
    expect(message).not.toMatch(/[\n\u0000]/);
  });

  it('reads process.env by default', () => {
    process.env.SWITCHBOARD_SECRET_SPEC_DEFAULT = 'from-process-env';
    try {
      expect(resolveSecret('SWITCHBOARD_SECRET_SPEC_DEFAULT')).toBe('from-process-env');
    } finally {
      delete process.env.SWITCHBOARD_SECRET_SPEC_DEFAULT;
    }
  });
});

describe('isAllowedSecretName', () => {
  it('allows only the prefix with a non-empty upper-case suffix, or the exact names', () => {
    expect(isAllowedSecretName('SWITCHBOARD_SECRET_A1_B')).toBe(true);
    expect(isAllowedSecretName('OPENAI_API_KEY')).toBe(true);
    expect(isAllowedSecretName('MY_SWITCHBOARD_SECRET_A')).toBe(false);
    expect(isAllowedSecretName('')).toBe(false);
  });
});

/**
 * A secret's name: what agent configs reference (apiKeySecret, signingSecret) and the vault stores
 * it under. Letters, digits, `_ . -`, starting with a letter, at most 64 characters: safe in URLs
 * (PUT /v1/secrets/:name), in log lines and in error messages.
 */
export const SECRET_NAME_PATTERN = /^[A-Za-z][A-Za-z0-9_.-]{0,63}$/;

export const SECRET_NAME_RULE = 'must be a secret name: 1-64 letters, digits, "_", "." or "-", starting with a letter';

export * from './agent-config.schema';
export * from './call-handoff.schema';
export * from './parse-agent-config';
export * from './prompt-variables';
export { OPENAI_DEFAULT_BASE_URL, OPERATOR_KEY_ENV_NAMES, operatorKeyEndpointProblem, resolveOperatorKey, SecretReferenceError, VAULT_MIGRATION_HINT } from './secret-reference';

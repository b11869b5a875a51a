import { z } from 'zod';

/*
 * A scenario test suite, as a tenant writes it (POST /v1/agents/{id}/tests, or a suite.json given to
 * `npm run agents -- test`). Everything is bounded: a suite runs as real-time calls, so its size is
 * its duration and cost. Tool argument schemas are tenant-written JSON Schemas: they are compiled
 * with the same safe compiler as tool `parameters` (scenario-suite-validation.ts).
 */

/** The one route whose body may be larger than the API's 256 kB (see server-app.ts). */
export const SCENARIO_SUITE_ROUTE = /^\/v1\/agents\/[^/]+\/tests$/;
export const SCENARIO_SUITE_BODY_LIMIT = '4mb';
export const MAX_SCENARIOS = 20;
export const MAX_TURNS = 20;
/** A WAV turn, base64: 1.4 MB is ~40 s at 16 kHz mono (the request body allows 4 MB in all). */
export const MAX_WAV_BASE64_CHARS = 1_400_000;
export const DEFAULT_TURN_TIMEOUT_MS = 15_000;

const phrase = z.string().trim().min(1).max(200);

export const toolCallExpectation = z.strictObject({
  name: z.string().min(1).max(64).describe('The tool the agent must call during this turn (e.g. `transfer_call` or a webhook tool).'),
  arguments: z
    .record(z.string(), z.unknown())
    .optional()
    .describe('A JSON Schema the call\'s arguments must match (e.g. `{"type":"object","required":["date"]}`); omitted: any arguments.'),
});

export const turnExpectations = z.strictObject({
  toolCalls: z.array(toolCallExpectation).max(5).optional().describe('Each listed tool is called at least once in this turn, with matching arguments.'),
  replyIncludes: z.array(phrase).max(10).optional().describe('Words or phrases the agent\'s reply (as the caller heard it) must contain; case-insensitive.'),
  replyExcludes: z.array(phrase).max(10).optional().describe('Words or phrases the reply must not contain; case-insensitive.'),
  endsCall: z.boolean().optional().describe('true: the agent ends the call after this turn; false: the call goes on.'),
  transfer: z
    .union([z.literal(true), z.strictObject({ to: z.string().min(1).max(32) })])
    .optional()
    .describe('The agent transfers the caller during this turn (to this number, when given). Test calls simulate the transfer.'),
});

export const callerTurn = z
  .strictObject({
    say: z.string().trim().min(1).max(500).optional().describe('Spoken to the agent by the built-in voice (Flite).'),
    wavBase64: z
      .string()
      .max(MAX_WAV_BASE64_CHARS)
      .regex(/^[A-Za-z0-9+/]+={0,2}$/, 'must be base64')
      .optional()
      .describe('A recorded utterance: a WAV file (any rate, mono or stereo), base64.'),
    expect: turnExpectations.default({}),
  })
  .refine((turn) => (turn.say === undefined) !== (turn.wavBase64 === undefined), { message: 'Give exactly one of `say` or `wavBase64`.' });

export const scenario = z.strictObject({
  name: z.string().trim().min(1).max(200),
  variables: z
    .record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/), z.string().max(1000))
    .refine((variables) => Object.keys(variables).length <= 32, { message: 'At most 32 variables.' })
    .optional()
    .describe('Per-call variables, as for a web call ({{call.params.NAME}}).'),
  turns: z.array(callerTurn).min(1).max(MAX_TURNS),
});

export const scenarioSuite = z.strictObject({
  name: z.string().trim().min(1).max(200).describe('Unique per agent: storing a suite under an existing name replaces it.'),
  turnTimeoutMs: z
    .number()
    .int()
    .min(2_000)
    .max(60_000)
    .default(DEFAULT_TURN_TIMEOUT_MS)
    .describe('How long the simulated caller waits for the agent to finish replying to a turn.'),
  scenarios: z.array(scenario).min(1).max(MAX_SCENARIOS),
});

export type ScenarioSuite = z.infer<typeof scenarioSuite>;
export type Scenario = z.infer<typeof scenario>;
export type CallerTurn = z.infer<typeof callerTurn>;
export type TurnExpectations = z.infer<typeof turnExpectations>;

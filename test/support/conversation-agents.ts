import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AgentRepository, OrganizationRepository, PhoneNumberRepository } from '@switchboard/persistence';
import { sineTone } from '@switchboard/audio';
import { SimulatedTwilioCall } from '@switchboard/simulated-caller';
import type { RecordedRequest } from '@switchboard/testing';
import { DEFAULT_ORGANIZATION_NAME } from '../../apps/server/src/bootstrap/bootstrap.service';
import { uniqueE164 } from './database';
import type { TestServer } from './test-server';

/** A caller utterance from test/fixtures/speech (8 kHz mu-law, as Twilio carries it). */
export function speechFixture(name: 'hours' | 'order-status' | 'transfer' | 'interrupt' | 'goodbye'): Uint8Array {
  return new Uint8Array(readFileSync(join(__dirname, '..', 'fixtures', 'speech', `${name}.8k.ulaw`)));
}

/**
 * Creates an agent in the admin key's organization and binds a fresh number to it (the REST API for
 * agents comes with the platform issue; until then tests use the repositories the API will use).
 */
export async function bindAgent(server: TestServer, input: { engine: 'pipeline' | 'realtime' | 'echo'; config: object; name?: string }): Promise<{ agentId: string; number: string }> {
  const organization = await server.app.get(OrganizationRepository).ensure(DEFAULT_ORGANIZATION_NAME);
  const agent = await server.app.get(AgentRepository).create({ organizationId: organization.id, name: input.name ?? 'test agent', engine: input.engine, config: input.config });
  const number = uniqueE164();
  await server.app.get(PhoneNumberRepository).upsert({ organizationId: organization.id, e164: number, agentId: agent.id });
  return { agentId: agent.id, number };
}

export interface LiveCall {
  call: SimulatedTwilioCall;
  callId: string;
}

/**
 * A simulated Twilio call to `number` on this server (not dialled yet), signed with the operator's
 * Twilio credentials, or with `account`'s (an organization's own Twilio account).
 */
export function callTo(
  server: TestServer,
  number: string,
  options: { from?: string; callSid?: string; account?: { accountSid: string; authToken: string } } = {},
): SimulatedTwilioCall {
  return new SimulatedTwilioCall({
    serverUrl: server.serverUrl,
    publicBaseUrl: server.publicBaseUrl,
    authToken: options.account?.authToken ?? server.authToken,
    accountSid: options.account?.accountSid ?? server.accountSid,
    from: options.from ?? '+15557654321',
    to: number,
    ...(options.callSid !== undefined && { callSid: options.callSid }),
  });
}

/** Dials `number` through the signed voice webhook and opens the media stream, as Twilio does. */
export async function dialAgent(
  server: TestServer,
  number: string,
  from = '+15557654321',
  account?: { accountSid: string; authToken: string },
): Promise<LiveCall> {
  const call = callTo(server, number, { from, account });
  const twiml = await call.dial();
  const callId = twiml.stream?.parameters['callId'];
  if (!callId) throw new Error(`the server did not connect a stream: ${JSON.stringify(twiml)}`);
  await call.connectMedia();
  return { call, callId };
}

/** Counts the agent audio frames the caller has received so far. */
export function framesReceived(call: SimulatedTwilioCall): number {
  return call.result().latency.framesReceived;
}

/** A pipeline agent's speech, recognition and LLM on one fake OpenAI-compatible server, keyed by the vault secret `apiKeySecret`. */
export function fakePipelineEngines(baseUrl: string, apiKeySecret: string) {
  return {
    stt: { provider: 'openai', model: 'whisper-1', baseUrl, apiKeySecret },
    llm: { provider: 'openai', model: 'gpt-test', baseUrl, apiKeySecret },
    tts: { provider: 'openai', model: 'tts-test', baseUrl, apiKeySecret, voice: 'alloy' },
  };
}

/** Fake agent speech: 30 ms of tone per character at 24 kHz, so longer text plays longer and a cut is measurable. */
export function toneSpeechFor(text: string): Int16Array {
  return sineTone({ frequencyHz: 440, sampleRate: 24_000, durationMs: Math.max(200, text.length * 30), amplitudeDbfs: -12 });
}

/** The last thing the caller said, as a chat request to the fake LLM carries it. */
export function lastUserMessage(request: RecordedRequest): string {
  const messages = (request.json as { messages: { role: string; content: string | null }[] }).messages;
  return [...messages].reverse().find((message) => message.role === 'user')?.content ?? '';
}

import { computeTwilioSignature, SimulatedTwilioCall } from '@switchboard/testing';
import { uniqueE164 } from './database';
import type { TestServer } from './test-server';

/**
 * Helpers for tests of outbound calls, run in an organization of the test's own (its admin key):
 * an agent and a caller-ID number set up through the public API, the raw HTTP answer of a /v1 call
 * (with headers, which TestServer.api leaves out), and Twilio's side of a placed call.
 */

export interface OrganizationLine {
  agentId: string;
  /** The organization's number, bound to the agent: the `from` of its outbound calls. */
  number: string;
}

export async function setUpLine(server: TestServer, apiKey: string, agent: { engine: 'echo' | 'pipeline'; config?: object }): Promise<OrganizationLine> {
  const created = await server.api('/v1/agents', { method: 'POST', apiKey, body: { name: 'outbound agent', engine: agent.engine, config: agent.config ?? {} } });
  if (created.status !== 201) throw new Error(`agent not created: ${created.status} ${JSON.stringify(created.body)}`);
  const number = uniqueE164();
  const registered = await server.api('/v1/phone-numbers', { method: 'POST', apiKey, body: { e164: number, agentId: created.body.id } });
  if (registered.status !== 201) throw new Error(`number not registered: ${registered.status} ${JSON.stringify(registered.body)}`);
  return { agentId: created.body.id, number };
}

export interface RawAnswer {
  status: number;
  headers: Headers;
  body: any;
}

/** POST /v1/calls, answered raw (status, headers, JSON body). */
export async function postCall(server: TestServer, apiKey: string | null, body: unknown): Promise<RawAnswer> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (apiKey !== null) headers['authorization'] = `Bearer ${apiKey}`;
  const response = await fetch(`${server.serverUrl}/v1/calls`, { method: 'POST', headers, body: JSON.stringify(body) });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
}

/** A Twilio form POST to `path`, signed over the public URL as Twilio signs it. */
export async function postSignedTwilioForm(server: TestServer, path: string, params: Record<string, string>): Promise<Response> {
  return fetch(`${server.serverUrl}${path}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      'x-twilio-signature': computeTwilioSignature(server.authToken, `${server.publicBaseUrl}${path}`, params),
    },
    body: new URLSearchParams(params),
  });
}

/** Twilio's asyncAmdStatusCallback for the call. */
export function sendAmdResult(server: TestServer, callSid: string, answeredBy: string): Promise<Response> {
  return postSignedTwilioForm(server, '/twilio/amd', {
    AccountSid: server.accountSid,
    CallSid: callSid,
    AnsweredBy: answeredBy,
    MachineDetectionDuration: '1850',
  });
}

/**
 * Twilio's side of a call placed with calls.create: once the callee answers, Twilio fetches the
 * call's TwiML URL (signed, with the CallSid) and opens the media stream the TwiML names.
 */
export function answeredOutboundCall(server: TestServer, call: { id: string; twilioCallSid: string; fromNumber: string; toNumber: string }): SimulatedTwilioCall {
  return new SimulatedTwilioCall({
    serverUrl: server.serverUrl,
    publicBaseUrl: server.publicBaseUrl,
    authToken: server.authToken,
    accountSid: server.accountSid,
    callSid: call.twilioCallSid,
    from: call.fromNumber,
    to: call.toNumber,
    voicePath: `/twilio/outbound/${call.id}`,
    extraVoiceParams: { Direction: 'outbound-api', CallStatus: 'in-progress' },
  });
}

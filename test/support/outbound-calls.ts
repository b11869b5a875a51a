import { computeTwilioSignature, SimulatedTwilioCall } from '@switchboard/simulated-caller';
import type { FakeTwilioRestServer } from '@switchboard/testing';
import { uniqueE164 } from './database';
import type { TenantTwilioAccount } from './tenant-twilio';
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

/**
 * `tenant`: the organization's own Twilio account (connected with connectTwilioAccount) on the fake
 * Twilio REST server; the number is put on that account first, as binding requires. Leave it out
 * only for the bootstrap (default) organization, whose numbers are the operator's.
 */
export async function setUpLine(
  server: TestServer,
  apiKey: string,
  agent: { engine: 'echo' | 'pipeline'; config?: object },
  tenant?: { twilio: FakeTwilioRestServer; account: TenantTwilioAccount },
): Promise<OrganizationLine> {
  const created = await server.api('/v1/agents', { method: 'POST', apiKey, body: { name: 'outbound agent', engine: agent.engine, config: agent.config ?? {} } });
  if (created.status !== 201) throw new Error(`agent not created: ${created.status} ${JSON.stringify(created.body)}`);
  const number = uniqueE164();
  tenant?.twilio.addIncomingNumber(tenant.account.accountSid, number);
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

/**
 * A Twilio form POST to `path`, signed over the public URL as Twilio signs it: with the operator's
 * token, or with `account`'s (an organization's own Twilio account; params carry its AccountSid).
 */
export async function postSignedTwilioForm(server: TestServer, path: string, params: Record<string, string>, account?: TenantTwilioAccount): Promise<Response> {
  return fetch(`${server.serverUrl}${path}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      'x-twilio-signature': computeTwilioSignature(account?.authToken ?? server.authToken, `${server.publicBaseUrl}${path}`, params),
    },
    body: new URLSearchParams(params),
  });
}

/** Twilio's asyncAmdStatusCallback for the call, from the account that placed it (the operator's unless `account`). */
export function sendAmdResult(server: TestServer, callSid: string, answeredBy: string, account?: TenantTwilioAccount): Promise<Response> {
  return postSignedTwilioForm(
    server,
    '/twilio/amd',
    {
      AccountSid: account?.accountSid ?? server.accountSid,
      CallSid: callSid,
      AnsweredBy: answeredBy,
      MachineDetectionDuration: '1850',
    },
    account,
  );
}

/**
 * Twilio's side of a call placed with calls.create: once the callee answers, Twilio fetches the
 * call's TwiML URL (signed, with the CallSid) and opens the media stream the TwiML names. Signed by
 * the account that placed the call: the operator's, or `account` (an organization's own).
 */
export function answeredOutboundCall(
  server: TestServer,
  call: { id: string; twilioCallSid: string; fromNumber: string; toNumber: string },
  account?: TenantTwilioAccount,
): SimulatedTwilioCall {
  return new SimulatedTwilioCall({
    serverUrl: server.serverUrl,
    publicBaseUrl: server.publicBaseUrl,
    authToken: account?.authToken ?? server.authToken,
    accountSid: account?.accountSid ?? server.accountSid,
    callSid: call.twilioCallSid,
    from: call.fromNumber,
    to: call.toNumber,
    voicePath: `/twilio/outbound/${call.id}`,
    extraVoiceParams: { Direction: 'outbound-api', CallStatus: 'in-progress' },
  });
}

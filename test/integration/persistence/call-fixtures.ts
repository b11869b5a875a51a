import { randomBytes } from 'node:crypto';
import { hashSecret } from '../../../libs/persistence/src/secret-hash';
import type { CreateInboundCallInput } from '../../../libs/persistence/src/repositories/call.repository';
import {
  createTestOrganization,
  TEST_ACCOUNT_SID,
  TestRepositories,
  uniqueCallSid,
  uniqueE164,
} from '../../support/database';

export interface InboundCallFixture {
  organizationId: string;
  agentId: string;
  callId: string;
  callSid: string;
  rawToken: string;
  input: CreateInboundCallInput;
}

/** An organization with an agent and one answered inbound call holding a fresh stream token. */
export async function createInboundCall(
  repos: TestRepositories,
  overrides: Partial<CreateInboundCallInput> = {},
): Promise<InboundCallFixture> {
  const organizationId = overrides.organizationId ?? (await createTestOrganization(repos)).id;
  const agent = await repos.agents.create({ organizationId, name: 'agent', engine: 'echo', config: { greeting: 'hi' } });
  const rawToken = randomBytes(32).toString('base64url');
  const input: CreateInboundCallInput = {
    twilioCallSid: uniqueCallSid(),
    twilioAccountSid: TEST_ACCOUNT_SID,
    fromNumber: uniqueE164(),
    toNumber: uniqueE164(),
    status: 'ringing',
    organizationId,
    agentId: agent.id,
    agentConfigVersion: 1,
    streamTokenHash: hashSecret(rawToken),
    streamTokenExpiresAt: new Date(Date.now() + 60_000),
    ...overrides,
  };
  const call = await repos.calls.createInbound(input);
  return { organizationId, agentId: agent.id, callId: call.id, callSid: input.twilioCallSid, rawToken, input };
}

import type { CreateInboundCallInput } from '../../../libs/persistence/src/repositories/call-identity';
import { createTestOrganization, inboundCallInput, TestRepositories } from '../../support/database';

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
  const { input, rawToken } = inboundCallInput(organizationId, agent.id, overrides);
  const call = await repos.admission.recordInbound(input);
  return { organizationId, agentId: agent.id, callId: call.id, callSid: input.twilioCallSid, rawToken, input };
}

import { AgentEngine } from '../../../libs/persistence/src/repositories/agent.repository';
import { createRepositories, createTestOrganization, createTestPrisma, uniqueE164 } from '../../support/database';

describe('AgentRepository and PhoneNumberRepository', () => {
  const prisma = createTestPrisma();
  const repos = createRepositories(prisma);

  afterAll(() => prisma.$disconnect());

  const pipelineConfig = { prompt: 'You are a helpful receptionist.', voice: { name: 'alloy', speed: 1.1 }, tools: [] };

  it('create() writes the agent with its config as version 1', async () => {
    const org = await createTestOrganization(repos);
    const agent = await repos.agents.create({ organizationId: org.id, name: ' Front desk ', engine: 'pipeline', config: pipelineConfig });
    expect(agent).toMatchObject({ organizationId: org.id, name: 'Front desk', engine: 'pipeline', currentVersion: 1 });
    await expect(repos.agents.currentConfig(agent.id)).resolves.toEqual({ version: 1, config: pipelineConfig });
    await expect(repos.agents.findById(org.id, agent.id)).resolves.toEqual(agent);
  });

  it('findById() hides other organizations\' and deleted agents', async () => {
    const org = await createTestOrganization(repos);
    const other = await createTestOrganization(repos);
    const agent = await repos.agents.create({ organizationId: org.id, name: 'a', engine: 'echo', config: {} });
    await expect(repos.agents.findById(other.id, agent.id)).resolves.toBeNull();
    await expect(repos.agents.findById(org.id, 'garbage')).resolves.toBeNull();
    await prisma.agent.update({ where: { id: agent.id }, data: { deletedAt: new Date() } });
    await expect(repos.agents.findById(org.id, agent.id)).resolves.toBeNull();
  });

  it('create() rejects an unknown engine and an empty name before touching the database', async () => {
    const org = await createTestOrganization(repos);
    await expect(
      repos.agents.create({ organizationId: org.id, name: 'x', engine: 'telepathy' as AgentEngine, config: {} }),
    ).rejects.toMatchObject({ code: 'invalid_input', message: expect.stringContaining('telepathy') });
    await expect(repos.agents.create({ organizationId: org.id, name: ' ', engine: 'echo', config: {} })).rejects.toMatchObject({
      code: 'invalid_input',
    });
    expect(await prisma.agent.count({ where: { organizationId: org.id } })).toBe(0);
  });

  it('updateConfig() appends versions, keeps old ones, and gives concurrent updates distinct versions', async () => {
    const org = await createTestOrganization(repos);
    const agent = await repos.agents.create({ organizationId: org.id, name: 'v', engine: 'realtime', config: { n: 1 } });
    const updates = await Promise.all([2, 3, 4].map((n) => repos.agents.updateConfig(org.id, agent.id, { n })));
    expect(updates.map((u) => u?.version).sort()).toEqual([2, 3, 4]);
    const current = await repos.agents.currentConfig(agent.id);
    expect(current?.version).toBe(4);
    await expect(repos.agents.configVersion(agent.id, 1)).resolves.toEqual({ version: 1, config: { n: 1 } });
    const other = await createTestOrganization(repos);
    await expect(repos.agents.updateConfig(other.id, agent.id, { n: 99 })).resolves.toBeNull();
    await expect(repos.agents.currentConfig('00000000-0000-4000-8000-000000000000')).resolves.toBeNull();
  });

  it('findRouteByE164() resolves organization, agent, engine and CURRENT config in one go', async () => {
    const org = await createTestOrganization(repos);
    const agent = await repos.agents.create({ organizationId: org.id, name: 'r', engine: 'pipeline', config: pipelineConfig });
    const e164 = uniqueE164();
    const number = await repos.phoneNumbers.upsert({ organizationId: org.id, e164, agentId: agent.id });
    expect(number).toMatchObject({ e164, organizationId: org.id, agentId: agent.id });

    await expect(repos.phoneNumbers.findRouteByE164(e164)).resolves.toEqual({
      organizationId: org.id,
      agentId: agent.id,
      agentEngine: 'pipeline',
      configVersion: 1,
      config: pipelineConfig,
    });
    await repos.agents.updateConfig(org.id, agent.id, { prompt: 'v2' });
    await expect(repos.phoneNumbers.findRouteByE164(e164)).resolves.toMatchObject({ configVersion: 2, config: { prompt: 'v2' } });
  });

  it('findRouteByE164() is null for unknown, unrouted, malformed numbers and deleted agents', async () => {
    const org = await createTestOrganization(repos);
    await expect(repos.phoneNumbers.findRouteByE164(uniqueE164())).resolves.toBeNull();
    await expect(repos.phoneNumbers.findRouteByE164('not a number')).resolves.toBeNull();

    const unrouted = uniqueE164();
    await repos.phoneNumbers.upsert({ organizationId: org.id, e164: unrouted, agentId: null });
    await expect(repos.phoneNumbers.findRouteByE164(unrouted)).resolves.toBeNull();

    const agent = await repos.agents.create({ organizationId: org.id, name: 'd', engine: 'echo', config: {} });
    const routed = uniqueE164();
    await repos.phoneNumbers.upsert({ organizationId: org.id, e164: routed, agentId: agent.id });
    await prisma.agent.update({ where: { id: agent.id }, data: { deletedAt: new Date() } });
    await expect(repos.phoneNumbers.findRouteByE164(routed)).resolves.toBeNull();
  });

  it('upsert() re-points a number within the organization but never moves it to another one', async () => {
    const org = await createTestOrganization(repos);
    const first = await repos.agents.create({ organizationId: org.id, name: '1', engine: 'echo', config: {} });
    const second = await repos.agents.create({ organizationId: org.id, name: '2', engine: 'echo', config: {} });
    const e164 = uniqueE164();
    const created = await repos.phoneNumbers.upsert({ organizationId: org.id, e164, agentId: first.id });
    const moved = await repos.phoneNumbers.upsert({ organizationId: org.id, e164, agentId: second.id });
    expect(moved.id).toBe(created.id);
    await expect(repos.phoneNumbers.findRouteByE164(e164)).resolves.toMatchObject({ agentId: second.id });

    const intruder = await createTestOrganization(repos);
    const intruderAgent = await repos.agents.create({ organizationId: intruder.id, name: 'i', engine: 'echo', config: {} });
    await expect(
      repos.phoneNumbers.upsert({ organizationId: intruder.id, e164, agentId: intruderAgent.id }),
    ).rejects.toMatchObject({ code: 'conflict' });
    await expect(repos.phoneNumbers.findRouteByE164(e164)).resolves.toMatchObject({ organizationId: org.id, agentId: second.id });
  });

  it('upsert() validates the number and that the agent belongs to the organization', async () => {
    const org = await createTestOrganization(repos);
    const other = await createTestOrganization(repos);
    const foreignAgent = await repos.agents.create({ organizationId: other.id, name: 'f', engine: 'echo', config: {} });
    await expect(repos.phoneNumbers.upsert({ organizationId: org.id, e164: '4155550100', agentId: null })).rejects.toMatchObject({
      code: 'invalid_input',
    });
    await expect(
      repos.phoneNumbers.upsert({ organizationId: org.id, e164: uniqueE164(), agentId: foreignAgent.id }),
    ).rejects.toMatchObject({ code: 'invalid_input' });
    expect(await prisma.phoneNumber.count({ where: { organizationId: org.id } })).toBe(0);
  });
});

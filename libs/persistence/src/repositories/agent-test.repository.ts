import { Injectable } from '@nestjs/common';
import { Prisma } from '../generated/prisma/client';
import { PrismaService } from '../prisma.service';
import { isUuid } from '../uuid';
import type { InputJsonValue, JsonValue } from './json';

export type AgentTestRunStatus = 'running' | 'passed' | 'failed' | 'error';

export interface AgentTestSuiteRecord {
  id: string;
  agentId: string;
  name: string;
  /** The suite as the API validated it (its name is `name`). */
  definition: JsonValue;
  createdAt: Date;
  updatedAt: Date;
}

export interface AgentTestRunRecord {
  id: string;
  agentId: string;
  suiteId: string;
  suiteName: string;
  agentConfigVersion: number;
  scenarioCount: number;
  status: AgentTestRunStatus;
  error: string | null;
  results: JsonValue;
  createdAt: Date;
  deadlineAt: Date;
  finishedAt: Date | null;
}

const SUITE_COLUMNS = { id: true, agentId: true, name: true, definition: true, createdAt: true, updatedAt: true } as const;
const RUN_COLUMNS = {
  id: true,
  agentId: true,
  suiteId: true,
  suiteName: true,
  agentConfigVersion: true,
  scenarioCount: true,
  status: true,
  error: true,
  results: true,
  createdAt: true,
  deadlineAt: true,
  finishedAt: true,
} as const;

/**
 * Scenario test suites and their runs, always read and written within one organization (a suite or
 * run id from another organization reads as absent). A run still 'running' past its deadline was
 * cut short by a stopped process: it is shown as an error, never as running forever.
 */
@Injectable()
export class AgentTestRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** Creates the suite, or replaces the definition of the agent's suite with this name. */
  async saveSuite(input: { organizationId: string; agentId: string; name: string; definition: InputJsonValue }): Promise<AgentTestSuiteRecord> {
    const { organizationId, agentId, name, definition } = input;
    return this.prisma.agentTestSuite.upsert({
      where: { agentId_name: { agentId, name } },
      create: { organizationId, agentId, name, definition },
      update: { definition },
      select: SUITE_COLUMNS,
    });
  }

  async listSuites(organizationId: string, agentId: string): Promise<AgentTestSuiteRecord[]> {
    if (!isUuid(organizationId) || !isUuid(agentId)) return [];
    return this.prisma.agentTestSuite.findMany({ where: { organizationId, agentId }, orderBy: { name: 'asc' }, select: SUITE_COLUMNS, take: 100 });
  }

  async findSuite(organizationId: string, agentId: string, suiteId: string): Promise<AgentTestSuiteRecord | null> {
    if (!isUuid(organizationId) || !isUuid(agentId) || !isUuid(suiteId)) return null;
    return this.prisma.agentTestSuite.findFirst({ where: { id: suiteId, organizationId, agentId }, select: SUITE_COLUMNS });
  }

  async deleteSuite(organizationId: string, agentId: string, suiteId: string): Promise<boolean> {
    if (!isUuid(organizationId) || !isUuid(agentId) || !isUuid(suiteId)) return false;
    const deleted = await this.prisma.agentTestSuite.deleteMany({ where: { id: suiteId, organizationId, agentId } });
    return deleted.count === 1;
  }

  async startRun(input: { organizationId: string; agentId: string; suite: AgentTestSuiteRecord; agentConfigVersion: number; scenarioCount: number; deadlineAt: Date }): Promise<AgentTestRunRecord> {
    const row = await this.prisma.agentTestRun.create({
      data: {
        organizationId: input.organizationId,
        agentId: input.agentId,
        suiteId: input.suite.id,
        suiteName: input.suite.name,
        agentConfigVersion: input.agentConfigVersion,
        scenarioCount: input.scenarioCount,
        status: 'running',
        deadlineAt: input.deadlineAt,
      },
      select: RUN_COLUMNS,
    });
    return toRunRecord(row);
  }

  /** How many of the organization's runs are still going (not past their deadline). */
  async countRunning(organizationId: string, now = new Date()): Promise<number> {
    if (!isUuid(organizationId)) return 0;
    return this.prisma.agentTestRun.count({ where: { organizationId, status: 'running', deadlineAt: { gt: now } } });
  }

  /** Stores the results so far (the run goes on). */
  async saveProgress(runId: string, results: InputJsonValue): Promise<void> {
    await this.prisma.agentTestRun.updateMany({ where: { id: runId, status: 'running' }, data: { results } });
  }

  async finishRun(runId: string, outcome: { status: Exclude<AgentTestRunStatus, 'running'>; results: InputJsonValue; error?: string; at?: Date }): Promise<void> {
    await this.prisma.agentTestRun.updateMany({
      where: { id: runId, status: 'running' },
      data: { status: outcome.status, results: outcome.results, error: outcome.error ?? null, finishedAt: outcome.at ?? new Date() },
    });
  }

  async findRun(organizationId: string, agentId: string, runId: string, now = new Date()): Promise<AgentTestRunRecord | null> {
    if (!isUuid(organizationId) || !isUuid(agentId) || !isUuid(runId)) return null;
    const row = await this.prisma.agentTestRun.findFirst({ where: { id: runId, organizationId, agentId }, select: RUN_COLUMNS });
    return row ? overdueAsError(toRunRecord(row), now) : null;
  }

  /** The agent's runs, newest first. */
  async listRuns(organizationId: string, agentId: string, limit = 20, now = new Date()): Promise<AgentTestRunRecord[]> {
    if (!isUuid(organizationId) || !isUuid(agentId)) return [];
    const rows = await this.prisma.agentTestRun.findMany({
      where: { organizationId, agentId },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      take: limit,
      select: RUN_COLUMNS,
    });
    return rows.map((row) => overdueAsError(toRunRecord(row), now));
  }
}

function toRunRecord(row: Prisma.AgentTestRunGetPayload<{ select: typeof RUN_COLUMNS }>): AgentTestRunRecord {
  return { ...row, status: row.status as AgentTestRunStatus };
}

function overdueAsError(run: AgentTestRunRecord, now: Date): AgentTestRunRecord {
  if (run.status !== 'running' || run.deadlineAt.getTime() > now.getTime()) return run;
  return { ...run, status: 'error', error: 'the run did not finish in time (its server process stopped or a call hung)' };
}

import { BadRequestException, ConflictException, HttpException, HttpStatus, Injectable, NotFoundException } from '@nestjs/common';
import { compileToolSchema } from '@switchboard/conversation';
import { AgentRepository, AgentTestRepository, type AgentTestRunRecord, type AgentTestSuiteRecord, type InputJsonValue } from '@switchboard/persistence';
import { agentNotFound } from '../agents-api/agent-responses';
import { AgentTestRunner } from './agent-test-runner';
import type { ScenarioResult } from './scenario-result';
import { MAX_WAV_BASE64_CHARS, scenarioSuite, type ScenarioSuite } from './scenario-suite.schema';

/**
 * Runs an organization may have going at once: each holds a call slot and its callers' audio in
 * memory, and a tenant must not be able to pile them up.
 */
export const MAX_RUNNING_RUNS_PER_ORGANIZATION = 3;
/** Beyond its turns' own time, what one scenario may take: placing the call, the hang-up, its records. */
const SCENARIO_OVERHEAD_MS = 30_000;
/** The longest a turn's audio can be: 500 characters of speech, or the largest WAV allowed. */
const LONGEST_TURN_AUDIO_MS = Math.max(60_000, (MAX_WAV_BASE64_CHARS * 0.75) / 32);

/**
 * Scenario test suites of an agent and their runs. A suite is checked when stored (its shape, and
 * every expected-arguments JSON Schema compiled by the same bounded compiler as a tool's
 * parameters), so a run never finds it broken.
 */
@Injectable()
export class AgentTestService {
  constructor(
    private readonly agents: AgentRepository,
    private readonly tests: AgentTestRepository,
    private readonly runner: AgentTestRunner,
  ) {}

  async saveSuite(organizationId: string, agentId: string, suite: ScenarioSuite): Promise<AgentTestSuiteRecord> {
    await this.requireAgent(organizationId, agentId);
    const problems = argumentSchemaProblems(suite);
    if (problems.length > 0) {
      throw new BadRequestException({ statusCode: 400, error: 'Bad Request', code: 'invalid_test_suite', message: 'The test suite is invalid.', problems });
    }
    return this.tests.saveSuite({ organizationId, agentId, name: suite.name, definition: suite as unknown as InputJsonValue });
  }

  async listSuites(organizationId: string, agentId: string): Promise<AgentTestSuiteRecord[]> {
    await this.requireAgent(organizationId, agentId);
    return this.tests.listSuites(organizationId, agentId);
  }

  async suite(organizationId: string, agentId: string, suiteId: string): Promise<AgentTestSuiteRecord> {
    const suite = await this.tests.findSuite(organizationId, agentId, suiteId);
    if (!suite) throw suiteNotFound(suiteId);
    return suite;
  }

  async deleteSuite(organizationId: string, agentId: string, suiteId: string): Promise<void> {
    if (!(await this.tests.deleteSuite(organizationId, agentId, suiteId))) throw suiteNotFound(suiteId);
  }

  /** Starts a run in the background; its result is read with run() as each scenario finishes. */
  async startRun(organizationId: string, agentId: string, suiteId: string): Promise<AgentTestRunRecord> {
    const agent = await this.requireAgent(organizationId, agentId);
    const stored = await this.suite(organizationId, agentId, suiteId);
    const parsed = scenarioSuite.safeParse(stored.definition);
    if (!parsed.success) {
      throw new ConflictException({ statusCode: 409, error: 'Conflict', code: 'test_suite_outdated', message: 'The stored suite no longer matches the suite schema: store it again.' });
    }
    const suite = parsed.data;
    if ((await this.tests.countRunning(organizationId)) >= MAX_RUNNING_RUNS_PER_ORGANIZATION) {
      throw new HttpException(
        { statusCode: 429, error: 'Too Many Requests', code: 'test_runs_limit', message: `At most ${MAX_RUNNING_RUNS_PER_ORGANIZATION} test runs at once per organization: wait for one to finish.` },
        HttpStatus.TOO_MANY_REQUESTS,
      );
    }
    const run = await this.tests.startRun({ organizationId, agentId, suite: stored, agentConfigVersion: agent.currentVersion, scenarioCount: suite.scenarios.length, deadlineAt: new Date(Date.now() + runBudgetMs(suite)) });
    this.runner.launch(organizationId, run, suite);
    return run;
  }

  async run(organizationId: string, agentId: string, runId: string): Promise<AgentTestRunRecord> {
    const run = await this.tests.findRun(organizationId, agentId, runId);
    if (!run) throw new NotFoundException({ statusCode: 404, error: 'Not Found', code: 'test_run_not_found', message: `No test run ${runId} for this agent.` });
    return run;
  }

  async runs(organizationId: string, agentId: string): Promise<AgentTestRunRecord[]> {
    await this.requireAgent(organizationId, agentId);
    return this.tests.listRuns(organizationId, agentId);
  }

  private async requireAgent(organizationId: string, agentId: string) {
    const agent = await this.agents.findById(organizationId, agentId);
    if (!agent) throw agentNotFound(agentId);
    return agent;
  }
}

/** The most a run of this suite may take before it is given up (its deadline). */
export function runBudgetMs(suite: ScenarioSuite): number {
  const turns = suite.scenarios.reduce((sum, scenario) => sum + scenario.turns.length, 0);
  return suite.scenarios.length * SCENARIO_OVERHEAD_MS + turns * (suite.turnTimeoutMs + LONGEST_TURN_AUDIO_MS);
}

function argumentSchemaProblems(suite: ScenarioSuite): Array<{ path: string; message: string }> {
  const problems: Array<{ path: string; message: string }> = [];
  suite.scenarios.forEach((scenario, s) =>
    scenario.turns.forEach((turn, t) =>
      (turn.expect.toolCalls ?? []).forEach((expected, c) => {
        if (expected.arguments === undefined) return;
        const compiled = compileToolSchema(expected.arguments);
        if (compiled.ok) return;
        for (const problem of compiled.problems) {
          const at = `scenarios.${s}.turns.${t}.expect.toolCalls.${c}.arguments`;
          problems.push({ path: problem.path === '' ? at : `${at}.${problem.path}`, message: problem.message });
        }
      }),
    ),
  );
  return problems;
}

function suiteNotFound(suiteId: string): NotFoundException {
  return new NotFoundException({ statusCode: 404, error: 'Not Found', code: 'test_suite_not_found', message: `No test suite ${suiteId} for this agent.` });
}

/** A stored run as the API shows it. */
export function runView(run: AgentTestRunRecord) {
  const results = (Array.isArray(run.results) ? run.results : []) as unknown as ScenarioResult[];
  return {
    id: run.id,
    agentId: run.agentId,
    suiteId: run.suiteId,
    suiteName: run.suiteName,
    agentConfigVersion: run.agentConfigVersion,
    status: run.status,
    error: run.error,
    passed: results.filter((result) => result.passed).length,
    failed: results.filter((result) => !result.passed).length,
    scenarioCount: run.scenarioCount,
    results,
    createdAt: run.createdAt.toISOString(),
    finishedAt: run.finishedAt?.toISOString() ?? null,
  };
}

/** A stored suite as the API lists it (without its scenarios, which may carry recordings). */
export function suiteSummary(suite: AgentTestSuiteRecord) {
  const definition = suite.definition as unknown as ScenarioSuite;
  const scenarios = Array.isArray(definition?.scenarios) ? definition.scenarios : [];
  return {
    id: suite.id,
    agentId: suite.agentId,
    name: suite.name,
    scenarioCount: scenarios.length,
    turnCount: scenarios.reduce((sum, scenario) => sum + (Array.isArray(scenario.turns) ? scenario.turns.length : 0), 0),
    createdAt: suite.createdAt.toISOString(),
    updatedAt: suite.updatedAt.toISOString(),
  };
}

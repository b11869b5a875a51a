import { Body, Controller, Delete, Get, HttpCode, HttpStatus, Param, Post, UseGuards } from '@nestjs/common';
import { ApiAcceptedResponse, ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { z } from 'zod';
import { agentIdParam } from '../agents-api/agent-requests.schema';
import { ApiKeyGuard, type ApiPrincipal } from '../auth/api-key.guard';
import { Principal } from '../auth/principal.decorator';
import { RequireScope } from '../auth/require-scope.decorator';
import { ZodValidationPipe } from '../common/zod-validation.pipe';
import { ApiErrors, ApiKeyAuthenticated, createApiDto } from '../openapi/api-schemas';
import { AgentTestRunDto, AgentTestRunListDto, AgentTestSuiteDto, AgentTestSuiteListDto, AgentTestSuiteSummaryDto } from './agent-test-responses.schema';
import { AgentTestService, runView, suiteSummary } from './agent-test.service';
import { scenarioSuite } from './scenario-suite.schema';

const idParam = z.string().min(1).max(64);
const runBody = z.strictObject({ suiteId: z.guid().describe('The suite to run (POST /v1/agents/{id}/tests answers its id).') });
class ScenarioSuiteDto extends createApiDto(scenarioSuite) {}
class RunBodyDto extends createApiDto(runBody) {}

/**
 * Scenario tests of an agent: suites of caller turns with expectations, run through the simulated
 * caller (a web call on this server's own socket) against the agent's real engines. Storing and
 * running need `admin` (a run places calls, which cost money); reading needs any key.
 */
@ApiTags('Agent tests')
@ApiKeyAuthenticated()
@Controller('v1/agents/:id/tests')
@UseGuards(ApiKeyGuard)
export class AgentTestsController {
  constructor(private readonly tests: AgentTestService) {}

  @Post()
  @RequireScope('admin')
  @ApiCreatedResponse({ type: AgentTestSuiteSummaryDto, description: 'Stored; a suite with the same name is replaced. Body up to 4 MB (recorded turns).' })
  @ApiErrors(400, 403, 404)
  async save(
    @Principal() principal: ApiPrincipal,
    @Param('id', new ZodValidationPipe(agentIdParam)) agentId: string,
    @Body(new ZodValidationPipe(scenarioSuite)) body: ScenarioSuiteDto,
  ) {
    return suiteSummary(await this.tests.saveSuite(principal.organizationId, agentId, body));
  }

  @Get()
  @ApiOkResponse({ type: AgentTestSuiteListDto, description: 'The agent\'s suites by name, without their scenarios.' })
  @ApiErrors(404)
  async list(@Principal() principal: ApiPrincipal, @Param('id', new ZodValidationPipe(agentIdParam)) agentId: string) {
    return { data: (await this.tests.listSuites(principal.organizationId, agentId)).map(suiteSummary) };
  }

  @Post('run')
  @RequireScope('admin')
  @HttpCode(HttpStatus.ACCEPTED)
  @ApiAcceptedResponse({ type: AgentTestRunDto, description: 'The run, started: its scenarios are called one after another; poll GET .../tests/runs/{runId}.' })
  @ApiErrors(400, 403, 404, 409, 429)
  async run(
    @Principal() principal: ApiPrincipal,
    @Param('id', new ZodValidationPipe(agentIdParam)) agentId: string,
    @Body(new ZodValidationPipe(runBody)) body: RunBodyDto,
  ) {
    return runView(await this.tests.startRun(principal.organizationId, agentId, body.suiteId));
  }

  @Get('runs')
  @ApiOkResponse({ type: AgentTestRunListDto, description: 'The agent\'s latest 20 runs, newest first.' })
  @ApiErrors(404)
  async runs(@Principal() principal: ApiPrincipal, @Param('id', new ZodValidationPipe(agentIdParam)) agentId: string) {
    return { data: (await this.tests.runs(principal.organizationId, agentId)).map(runView) };
  }

  @Get('runs/:runId')
  @ApiOkResponse({ type: AgentTestRunDto, description: 'A run with a result per finished scenario: transcript, and which expectations failed.' })
  @ApiErrors(404)
  async runDetail(
    @Principal() principal: ApiPrincipal,
    @Param('id', new ZodValidationPipe(agentIdParam)) agentId: string,
    @Param('runId', new ZodValidationPipe(idParam)) runId: string,
  ) {
    return runView(await this.tests.run(principal.organizationId, agentId, runId));
  }

  @Get(':suiteId')
  @ApiOkResponse({ type: AgentTestSuiteDto })
  @ApiErrors(404)
  async suite(
    @Principal() principal: ApiPrincipal,
    @Param('id', new ZodValidationPipe(agentIdParam)) agentId: string,
    @Param('suiteId', new ZodValidationPipe(idParam)) suiteId: string,
  ) {
    const suite = await this.tests.suite(principal.organizationId, agentId, suiteId);
    return { ...suiteSummary(suite), definition: suite.definition };
  }

  @Delete(':suiteId')
  @RequireScope('admin')
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiNoContentResponse({ description: 'The suite and its runs are deleted (the runs\' calls stay).' })
  @ApiErrors(403, 404)
  async remove(
    @Principal() principal: ApiPrincipal,
    @Param('id', new ZodValidationPipe(agentIdParam)) agentId: string,
    @Param('suiteId', new ZodValidationPipe(idParam)) suiteId: string,
  ): Promise<void> {
    await this.tests.deleteSuite(principal.organizationId, agentId, suiteId);
  }
}

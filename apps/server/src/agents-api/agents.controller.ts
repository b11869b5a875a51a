import { Body, Controller, Delete, Get, HttpCode, HttpStatus, Param, Patch, Post, Query, UseGuards } from '@nestjs/common';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { ApiKeyGuard, type ApiPrincipal } from '../auth/api-key.guard';
import { Principal } from '../auth/principal.decorator';
import { RequireScope } from '../auth/require-scope.decorator';
import { ZodValidationPipe } from '../common/zod-validation.pipe';
import { ApiErrors, ApiKeyAuthenticated } from '../openapi/api-schemas';
import {
  agentIdParam,
  configVersionParam,
  createAgentBody,
  listAgentsQuery,
  updateAgentBody,
  CreateAgentBodyDto,
  ListAgentsQueryDto,
  UpdateAgentBodyDto,
} from './agent-requests.schema';
import { agentConfigJsonSchema } from './agent-config-json-schema';
import { AgentConfigJsonSchemaDto, AgentConfigVersionDto, AgentDto, AgentPageDto } from './agent-responses.schema';
import { agentNotFound, agentSummary, agentWithConfig } from './agent-responses';
import { AgentsService } from './agents.service';

/**
 * Agents of the API key's organization. Every config change is a new, immutable version, so a
 * recorded call can always be traced to the exact config it ran with.
 */
@ApiTags('Agents')
@ApiKeyAuthenticated()
@Controller('v1/agents')
@UseGuards(ApiKeyGuard)
export class AgentsController {
  constructor(private readonly agents: AgentsService) {}

  @Post()
  @RequireScope('admin')
  @ApiCreatedResponse({ type: AgentDto, description: 'The agent with its config (version 1), defaults filled in, and its readiness: an agent that is not ready yet (a secret still to store) is saved, with the problems.' })
  @ApiErrors(400, 403)
  async create(@Principal() principal: ApiPrincipal, @Body(new ZodValidationPipe(createAgentBody)) body: CreateAgentBodyDto) {
    const { agent, config, readiness } = await this.agents.create(principal.organizationId, body.name, body.engine, body.config);
    return agentWithConfig(agent, { version: agent.currentVersion, config }, readiness);
  }

  @Get()
  @ApiOkResponse({ type: AgentPageDto, description: 'The organization\'s agents, newest first, without their configs.' })
  @ApiErrors(400)
  async list(@Principal() principal: ApiPrincipal, @Query(new ZodValidationPipe(listAgentsQuery)) query: ListAgentsQueryDto) {
    const page = await this.agents.list({ organizationId: principal.organizationId, limit: query.limit, cursor: query.cursor });
    return { data: page.items.map((agent, index) => agentSummary(agent, page.readiness[index]!)), nextCursor: page.nextCursor };
  }

  /** Declared before `:id`, which would otherwise take `config-schema` for an agent id. */
  @Get('config-schema')
  @ApiOkResponse({
    type: AgentConfigJsonSchemaDto,
    description:
      'The agent config as JSON Schema (draft 2020-12, input side: fields with defaults are optional), made from the same schema a saved config is validated with. ' +
      'Fields carry `description` and `x-engines` (the engines that read them). Any key scope.',
  })
  configSchema() {
    return agentConfigJsonSchema();
  }

  @Get(':id')
  @ApiOkResponse({ type: AgentDto })
  @ApiErrors(404)
  async detail(@Principal() principal: ApiPrincipal, @Param('id', new ZodValidationPipe(agentIdParam)) id: string) {
    const found = await this.agents.withCurrentConfig(principal.organizationId, id);
    if (!found) throw agentNotFound(id);
    return agentWithConfig(found.agent, found.snapshot, found.readiness);
  }

  @Get(':id/versions/:version')
  @ApiOkResponse({ type: AgentConfigVersionDto, description: 'A past (or the current) config version, as stored.' })
  @ApiErrors(400, 404)
  async version(
    @Principal() principal: ApiPrincipal,
    @Param('id', new ZodValidationPipe(agentIdParam)) id: string,
    @Param('version', new ZodValidationPipe(configVersionParam)) version: number,
  ) {
    const { agent, snapshot } = await this.agents.configVersion(principal.organizationId, id, version);
    if (!agent) throw agentNotFound(id);
    if (!snapshot) throw agentNotFound(`${id} version ${version}`);
    return { agentId: id, version: snapshot.version, config: snapshot.config };
  }

  @Patch(':id')
  @RequireScope('admin')
  @ApiOkResponse({ type: AgentDto, description: 'Renames the agent and/or stores `config` as a new version (an unchanged config is not a new version).' })
  @ApiErrors(400, 403, 404)
  async update(
    @Principal() principal: ApiPrincipal,
    @Param('id', new ZodValidationPipe(agentIdParam)) id: string,
    @Body(new ZodValidationPipe(updateAgentBody)) body: UpdateAgentBodyDto,
  ) {
    if (!(await this.agents.update(principal.organizationId, id, { name: body.name, rawConfig: body.config }))) throw agentNotFound(id);
    return this.detail(principal, id);
  }

  @Delete(':id')
  @RequireScope('admin')
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiNoContentResponse({ description: 'Soft-deleted: past calls keep pointing at it; its numbers are unbound.' })
  @ApiErrors(403, 404)
  async remove(@Principal() principal: ApiPrincipal, @Param('id', new ZodValidationPipe(agentIdParam)) id: string): Promise<void> {
    if (!(await this.agents.softDelete(principal.organizationId, id))) throw agentNotFound(id);
  }
}

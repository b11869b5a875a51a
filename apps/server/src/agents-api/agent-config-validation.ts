import { BadRequestException } from '@nestjs/common';
import { AgentConfigError, parseAgentConfig, type AgentConfig } from '@switchboard/conversation';

/**
 * Validates a submitted agent config and returns it with every default filled in, which is what
 * gets stored: a version then says exactly what its calls ran with, even if defaults change later.
 * Invalid configs are a 400 listing every problem (paths relative to `config`), so a client can
 * mark all the bad fields at once.
 */
export function validateAgentConfig(input: unknown): AgentConfig {
  try {
    return parseAgentConfig(input);
  } catch (error) {
    if (!(error instanceof AgentConfigError)) throw error;
    throw new BadRequestException({
      statusCode: 400,
      error: 'Bad Request',
      code: 'invalid_agent_config',
      message: 'The agent config is invalid.',
      problems: error.problems,
    });
  }
}

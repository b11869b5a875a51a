import { Injectable } from '@nestjs/common';
import { EchoAgentEngine, type AgentEngine } from '@switchboard/conversation';

/** The agent engines this server can run, by the `engine` name stored on an agent. */
@Injectable()
export class AgentEngines {
  private readonly engines = new Map<string, AgentEngine>([['echo', new EchoAgentEngine()]]);

  resolve(engine: string): AgentEngine | undefined {
    return this.engines.get(engine);
  }

  all(): AgentEngine[] {
    return [...this.engines.values()];
  }
}

import { parseArgs } from 'node:util';

export const AGENTS_USAGE = `usage:
  npm run agents -- create --name <name> --engine pipeline|realtime|echo --config <agent.json> [--number <+E164>]
  npm run agents -- update <agent-id> --config <agent.json>
  npm run agents -- test <agent-id> <suite.json> [--url <server>] [--api-key <key>]

create and update write to the database the server uses (DATABASE_URL, or the embedded database in
DATA_DIR while the server is stopped). The config is validated first; every problem is listed with
its path.

test stores the scenario suite on the running server (by name: a suite with the same name is
replaced), runs it, prints a report and exits 0 when every scenario passed, 1 otherwise. The server
is --url or SWITCHBOARD_URL (default http://localhost:3000); the admin API key is --api-key or
SWITCHBOARD_API_KEY. A turn may give "wav": "file.wav" (relative to the suite file) instead of "say".`;

export class AgentsUsageError extends Error {
  override readonly name = 'AgentsUsageError';
}

export type AgentsCommand =
  | { kind: 'create'; name: string; engine: 'pipeline' | 'realtime' | 'echo'; configPath: string; number: string | undefined }
  | { kind: 'update'; agentId: string; configPath: string }
  | { kind: 'test'; agentId: string; suitePath: string; url: string; apiKey: string };

const ENGINES = ['pipeline', 'realtime', 'echo'] as const;
type EngineName = (typeof ENGINES)[number];

function isEngine(value: string | undefined): value is EngineName {
  return (ENGINES as readonly string[]).includes(value ?? '');
}

export function parseAgentsCommand(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): AgentsCommand {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      options: {
        name: { type: 'string' },
        engine: { type: 'string' },
        config: { type: 'string' },
        number: { type: 'string' },
        url: { type: 'string' },
        'api-key': { type: 'string' },
      },
    });
  } catch (error) {
    throw new AgentsUsageError(error instanceof Error ? error.message : String(error));
  }
  const [verb, target, file] = parsed.positionals;
  const { name, engine, config, number } = parsed.values;
  if (verb === 'test') return testCommand(target, file, parsed.values.url ?? env.SWITCHBOARD_URL, parsed.values['api-key'] ?? env.SWITCHBOARD_API_KEY);
  if (verb !== 'create' && verb !== 'update') throw new AgentsUsageError(`unknown command "${verb ?? ''}"`);
  if (!config) throw new AgentsUsageError('--config <agent.json> is required');
  if (verb === 'update') {
    if (!target) throw new AgentsUsageError('update needs the agent id');
    return { kind: 'update', agentId: target, configPath: config };
  }
  if (!name || name.trim().length === 0) throw new AgentsUsageError('--name is required');
  if (!isEngine(engine)) throw new AgentsUsageError(`--engine must be one of ${ENGINES.join(', ')}`);
  if (number !== undefined && !/^\+[1-9]\d{6,14}$/.test(number)) throw new AgentsUsageError(`--number must be an E.164 number such as +15551230000, got "${number}"`);
  return { kind: 'create', name: name.trim(), engine, configPath: config, number };
}

function testCommand(agentId: string | undefined, suitePath: string | undefined, url: string | undefined, apiKey: string | undefined): AgentsCommand {
  if (!agentId || !suitePath) throw new AgentsUsageError('test needs the agent id and the suite file');
  if (!apiKey) throw new AgentsUsageError('test needs an admin API key: --api-key or SWITCHBOARD_API_KEY');
  const server = url ?? 'http://localhost:3000';
  if (!/^https?:\/\//.test(server)) throw new AgentsUsageError(`--url must be an http(s) URL, got "${server}"`);
  return { kind: 'test', agentId, suitePath, url: server.replace(/\/+$/, ''), apiKey };
}

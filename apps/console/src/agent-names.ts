import { useEffect, useState } from 'react';
import { api, type AgentSummary, type Page } from './api';

/**
 * The organization's agents by id, for pages that name a call's or a campaign's agent. Read once
 * per page (an agent's name rarely changes while one looks); a failed read leaves ids shown short.
 */
export function useAgentNames(apiKey: string | undefined): ReadonlyMap<string, string> {
  const [names, setNames] = useState<ReadonlyMap<string, string>>(new Map());
  useEffect(() => {
    if (!apiKey) return;
    let stopped = false;
    api<Page<AgentSummary>>('/v1/agents?limit=100', { key: apiKey }).then(
      (page) => !stopped && setNames(new Map(page.data.map((agent) => [agent.id, agent.name]))),
      () => undefined,
    );
    return () => {
      stopped = true;
    };
  }, [apiKey]);
  return names;
}

import { lazy } from 'react';

/** The agent form (generated from the config's JSON Schema, with its form library) loads when first opened. */
export const LazyAgentEditor = lazy(() => import('./agent-editor').then((module) => ({ default: module.AgentEditor })));

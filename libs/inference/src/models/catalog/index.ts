import type { CatalogEntry } from '../model-catalog.types';
import { ASR_CATALOG } from './asr.catalog';
import { BUILTIN_CATALOG } from './builtin.catalog';
import { END_OF_TURN_CATALOG } from './end-of-turn.catalog';
import { LLM_CATALOG } from './llm.catalog';
import { TTS_CATALOG } from './tts.catalog';

/** Every model the engines know how to run, built-in and pullable. */
export const MODEL_CATALOG: readonly CatalogEntry[] = [...BUILTIN_CATALOG, ...ASR_CATALOG, ...TTS_CATALOG, ...END_OF_TURN_CATALOG, ...LLM_CATALOG];

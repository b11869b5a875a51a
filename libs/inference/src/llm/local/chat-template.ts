import { EngineError } from '../../contracts';

/** What the engine renders natively from a model's Jinja chat template (no Jinja engine here). */
export interface ChatMlTemplate {
  family: 'chatml';
  /** Qwen2.5 / Hermes tool calling: a `<tools>` block in the system prompt, `<tool_call>` replies. */
  supportsTools: boolean;
  /** The system prompt the template inserts when the conversation has none (Qwen2.5, SmolLM2). */
  defaultSystemPrompt: string | undefined;
}

/** Markers of the template families that are not ChatML, so the error can name what was found. */
const OTHER_FAMILIES: ReadonlyArray<[string, string]> = [
  ['<|start_header_id|>', 'Llama 3'],
  ['<start_of_turn>', 'Gemma'],
  ['[INST]', 'Mistral/Llama 2'],
  ['<|user|>', 'Phi-3/Zephyr'],
  ['<|START_OF_TURN_TOKEN|>', 'Command R'],
];

// In the Jinja source the newline is the two characters `\n` inside a string literal.
const DEFAULT_SYSTEM_PROMPT = /<\|im_start\|>system\\n([^'"{}<]*)<\|im_end\|>/;

/**
 * Reads the chat template's family from its source and the tokenizer's special tokens. The
 * ChatML family (`<|im_start|>role\n...<|im_end|>`: Qwen2/2.5/3, SmolLM2, Hermes, many
 * fine-tunes) is rendered natively; anything else fails with a non-retryable bad_request that
 * says what was found, rather than prompting the model in a format it was not trained on.
 */
export function detectChatTemplate(engine: string, source: string | undefined, hasToken: (token: string) => boolean): ChatMlTemplate {
  if (source === undefined || source.trim() === '') {
    throw new EngineError(engine, 'bad_request', `${engine}: the model has no chat template (tokenizer_config.json chat_template or chat_template.jinja)`, false);
  }
  const chatMl = source.includes('<|im_start|>') && hasToken('<|im_start|>') && hasToken('<|im_end|>');
  if (!chatMl) {
    const found = OTHER_FAMILIES.find(([marker]) => source.includes(marker))?.[1] ?? 'an unrecognised';
    throw new EngineError(
      engine,
      'bad_request',
      `${engine}: ${found} chat template is not supported; the local LLM engine renders ChatML templates (<|im_start|>role ... <|im_end|>: Qwen2.5, SmolLM2)`,
      false,
    );
  }
  const defaultPrompt = DEFAULT_SYSTEM_PROMPT.exec(source)?.[1];
  return {
    family: 'chatml',
    supportsTools: source.includes('<tool_call>') && source.includes('<tools>'),
    defaultSystemPrompt: defaultPrompt === undefined ? undefined : unescapeJinjaString(defaultPrompt),
  };
}

function unescapeJinjaString(text: string): string {
  return text.replace(/\\(.)/g, (_, char: string) => (char === 'n' ? '\n' : char === 't' ? '\t' : char));
}

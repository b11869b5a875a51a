import { AgentConfigSchema, TransferDestinationSchema } from '@switchboard/agent-config';
import { z } from 'zod';

/*
 * The agent config schema as the API documents it (the OpenAPI document and
 * GET /v1/agents/config-schema). The conversation lib validates the config and knows nothing of the
 * carrier, so the two warm-transfer settings whose meaning is the carrier's (it fetches the hold
 * music, it reads the whisper aloud) get their descriptions here, where the carrier is known. Zod
 * reads descriptions from its global registry when it writes JSON Schema, so every documentation of
 * the config must import the schema from this module.
 */
const CARRIER_FIELD_DESCRIPTIONS = {
  holdMusicUrl: "Warm: what the caller hears on hold, fetched by Twilio (an MP3/WAV file, or TwiML); Twilio's own hold music when not set.",
  whisper: "Warm: 'summary' (default): the person who answers hears a short summary of the call (Twilio <Say>) before being connected; 'none': connected at once.",
} as const;

for (const [field, description] of Object.entries(CARRIER_FIELD_DESCRIPTIONS)) {
  z.globalRegistry.add(TransferDestinationSchema.shape[field as keyof typeof CARRIER_FIELD_DESCRIPTIONS], { description });
}

export { AgentConfigSchema };

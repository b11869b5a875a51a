-- Conversation records: transcript turns, tool invocations and per-turn latency waterfalls.
-- Generated with
--   prisma migrate diff --from-schema-datamodel <schema at the previous commit> \
--     --to-schema-datamodel prisma/schema.prisma --script
-- plus the CHECK constraints at the end, which Prisma's schema language cannot express.

-- CreateTable
CREATE TABLE "transcript_turns" (
    "id" UUID NOT NULL,
    "call_id" UUID NOT NULL,
    "index" INTEGER NOT NULL,
    "role" TEXT NOT NULL,
    "source" TEXT NOT NULL,
    "text" TEXT NOT NULL,
    "heard_text" TEXT,
    "interrupted" BOOLEAN NOT NULL DEFAULT false,
    "start_ms" INTEGER NOT NULL,
    "end_ms" INTEGER NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "transcript_turns_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "tool_invocations" (
    "id" UUID NOT NULL,
    "call_id" UUID NOT NULL,
    "tool_call_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "arguments" JSONB NOT NULL,
    "result" JSONB,
    "error" TEXT,
    "started_at_ms" INTEGER NOT NULL,
    "latency_ms" DOUBLE PRECISION NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "tool_invocations_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "turn_latencies" (
    "call_id" UUID NOT NULL,
    "turn_index" INTEGER NOT NULL,
    "end_of_speech_ms" DOUBLE PRECISION,
    "end_of_turn_ms" DOUBLE PRECISION,
    "asr_final_ms" DOUBLE PRECISION,
    "llm_first_token_ms" DOUBLE PRECISION,
    "tts_first_byte_ms" DOUBLE PRECISION,
    "first_frame_sent_ms" DOUBLE PRECISION,
    "first_mark_echoed_ms" DOUBLE PRECISION,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "turn_latencies_pkey" PRIMARY KEY ("call_id","turn_index")
);

-- CreateIndex
CREATE UNIQUE INDEX "transcript_turns_call_id_index_key" ON "transcript_turns"("call_id", "index");

-- CreateIndex
CREATE INDEX "tool_invocations_call_id_started_at_ms_idx" ON "tool_invocations"("call_id", "started_at_ms");

-- AddForeignKey
ALTER TABLE "transcript_turns" ADD CONSTRAINT "transcript_turns_call_id_fkey" FOREIGN KEY ("call_id") REFERENCES "calls"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "tool_invocations" ADD CONSTRAINT "tool_invocations_call_id_fkey" FOREIGN KEY ("call_id") REFERENCES "calls"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "turn_latencies" ADD CONSTRAINT "turn_latencies_call_id_fkey" FOREIGN KEY ("call_id") REFERENCES "calls"("id") ON DELETE CASCADE ON UPDATE CASCADE;


-- Enum-like text columns: CHECKs instead of Postgres enums (see the init migration).
ALTER TABLE "transcript_turns" ADD CONSTRAINT "transcript_turns_role_check"
    CHECK ("role" IN ('user', 'assistant'));
ALTER TABLE "transcript_turns" ADD CONSTRAINT "transcript_turns_source_check"
    CHECK ("source" IN ('speech', 'dtmf', 'first_message', 'idle_prompt', 'tool_filler', 'apology', 'closing'));
ALTER TABLE "transcript_turns" ADD CONSTRAINT "transcript_turns_index_check"
    CHECK ("index" >= 0);
ALTER TABLE "turn_latencies" ADD CONSTRAINT "turn_latencies_turn_index_check"
    CHECK ("turn_index" >= 0);

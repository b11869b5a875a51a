-- Voicemail drop and warm transfer.

-- The voicemail an outbound call leaves when a machine answers after its greeting: the one given
-- to POST /v1/calls, else the default of the agent config, fixed when the call is placed. Null: none.
ALTER TABLE "calls" ADD COLUMN "voicemail_message" TEXT;
ALTER TABLE "calls" ADD CONSTRAINT "calls_voicemail_message_check"
    CHECK ("voicemail_message" IS NULL OR char_length("voicemail_message") BETWEEN 1 AND 2000);

-- Two more ways an assistant turn comes about: the voicemail message, and the agent taking the
-- caller back after a warm transfer nobody answered.
ALTER TABLE "transcript_turns" DROP CONSTRAINT "transcript_turns_source_check";
ALTER TABLE "transcript_turns" ADD CONSTRAINT "transcript_turns_source_check"
    CHECK ("source" IN ('speech', 'dtmf', 'first_message', 'idle_prompt', 'tool_filler', 'apology', 'closing', 'voicemail', 'transfer_return'));

-- One warm transfer of a call: the caller waits on hold in a Twilio conference while the
-- destination is dialled. The row is the state of the transfer, moved on by the Twilio callbacks
-- (any process may receive them) with conditional updates, so each step happens once.
CREATE TABLE "call_transfers" (
    "id" UUID NOT NULL,
    "call_id" UUID NOT NULL,
    "destination" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "conference_name" TEXT NOT NULL,
    "human_call_sid" TEXT,
    "whisper" TEXT NOT NULL,
    "summary" TEXT,
    "answer_timeout_s" INTEGER NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "ended_at" TIMESTAMPTZ(3),
    CONSTRAINT "call_transfers_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "call_transfers_status_check" CHECK ("status" IN ('holding', 'dialing', 'answered', 'connected', 'returned', 'abandoned')),
    CONSTRAINT "call_transfers_whisper_check" CHECK ("whisper" IN ('summary', 'none')),
    CONSTRAINT "call_transfers_summary_check" CHECK ("summary" IS NULL OR char_length("summary") <= 1000),
    CONSTRAINT "call_transfers_answer_timeout_s_check" CHECK ("answer_timeout_s" BETWEEN 5 AND 120),
    CONSTRAINT "call_transfers_call_id_fkey" FOREIGN KEY ("call_id") REFERENCES "calls"("id") ON DELETE CASCADE ON UPDATE CASCADE
);

CREATE INDEX "call_transfers_call_id_idx" ON "call_transfers"("call_id");
CREATE UNIQUE INDEX "call_transfers_human_call_sid_key" ON "call_transfers"("human_call_sid");

-- Outbound campaigns. The schedule and every contact live here, so the dialer (one in each
-- process) carries a campaign on after a restart: a tick locks one campaign row, claims due
-- contacts under a lease and places their calls after it commits.

CREATE TABLE "campaigns" (
    "id" UUID NOT NULL,
    "organization_id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "agent_id" UUID NOT NULL,
    "from_number" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "status_reason" TEXT,
    "time_zone" TEXT NOT NULL,
    "calling_windows" JSONB NOT NULL,
    "start_at" TIMESTAMPTZ(3) NOT NULL,
    "end_at" TIMESTAMPTZ(3),
    "max_concurrent_calls" INTEGER NOT NULL,
    "retry_on_busy" BOOLEAN NOT NULL,
    "retry_on_no_answer" BOOLEAN NOT NULL,
    "retry_on_voicemail" BOOLEAN NOT NULL,
    "max_attempts" INTEGER NOT NULL,
    "retry_delay_seconds" INTEGER NOT NULL,
    "machine_detection" TEXT,
    "voicemail_mode" TEXT NOT NULL,
    "voicemail_message" TEXT,
    "contact_count" INTEGER NOT NULL,
    "visited_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "completed_at" TIMESTAMPTZ(3),
    CONSTRAINT "campaigns_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "campaigns_status_check" CHECK ("status" IN ('running', 'paused', 'completed', 'cancelled')),
    CONSTRAINT "campaigns_name_check" CHECK (char_length("name") BETWEEN 1 AND 200),
    CONSTRAINT "campaigns_max_concurrent_calls_check" CHECK ("max_concurrent_calls" BETWEEN 1 AND 500),
    CONSTRAINT "campaigns_max_attempts_check" CHECK ("max_attempts" BETWEEN 1 AND 10),
    CONSTRAINT "campaigns_retry_delay_seconds_check" CHECK ("retry_delay_seconds" BETWEEN 0 AND 604800),
    CONSTRAINT "campaigns_machine_detection_check" CHECK ("machine_detection" IS NULL OR "machine_detection" IN ('Enable', 'DetectMessageEnd')),
    CONSTRAINT "campaigns_voicemail_check" CHECK (
        ("voicemail_mode" IN ('agent', 'none') AND "voicemail_message" IS NULL)
        OR ("voicemail_mode" = 'message' AND char_length("voicemail_message") BETWEEN 1 AND 2000)),
    CONSTRAINT "campaigns_contact_count_check" CHECK ("contact_count" BETWEEN 1 AND 10000),
    CONSTRAINT "campaigns_schedule_check" CHECK ("end_at" IS NULL OR "end_at" > "start_at"),
    CONSTRAINT "campaigns_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "campaigns_agent_id_fkey" FOREIGN KEY ("agent_id") REFERENCES "agents"("id") ON DELETE CASCADE ON UPDATE CASCADE
);

CREATE INDEX "campaigns_organization_id_created_at_id_idx" ON "campaigns"("organization_id", "created_at" DESC, "id" DESC);
-- What each dialer tick reads first: the running campaigns, least recently visited first.
CREATE INDEX "campaigns_running_idx" ON "campaigns"("visited_at" NULLS FIRST) WHERE "status" = 'running';

CREATE TABLE "campaign_contacts" (
    "id" UUID NOT NULL,
    "campaign_id" UUID NOT NULL,
    "position" INTEGER NOT NULL,
    "to_number" TEXT NOT NULL,
    "time_zone" TEXT NOT NULL,
    "variables" JSONB NOT NULL DEFAULT '{}',
    "status" TEXT NOT NULL,
    "outcome" TEXT,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "next_attempt_at" TIMESTAMPTZ(3) NOT NULL,
    "lease_until" TIMESTAMPTZ(3),
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "campaign_contacts_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "campaign_contacts_status_check" CHECK ("status" IN ('pending', 'dialing', 'done', 'cancelled')),
    CONSTRAINT "campaign_contacts_outcome_check" CHECK ("outcome" IS NULL OR "outcome" IN ('answered', 'voicemail', 'no_answer', 'busy', 'failed')),
    CONSTRAINT "campaign_contacts_attempts_check" CHECK ("attempts" BETWEEN 0 AND 10),
    CONSTRAINT "campaign_contacts_lease_check" CHECK ("status" <> 'dialing' OR "lease_until" IS NOT NULL),
    CONSTRAINT "campaign_contacts_campaign_id_fkey" FOREIGN KEY ("campaign_id") REFERENCES "campaigns"("id") ON DELETE CASCADE ON UPDATE CASCADE
);

CREATE UNIQUE INDEX "campaign_contacts_campaign_id_position_key" ON "campaign_contacts"("campaign_id", "position");
CREATE INDEX "campaign_contacts_campaign_id_status_next_attempt_at_idx" ON "campaign_contacts"("campaign_id", "status", "next_attempt_at");
-- Dialing contacts whose claiming process may have died (the dialer looks for expired leases).
CREATE INDEX "campaign_contacts_lease_idx" ON "campaign_contacts"("lease_until") WHERE "status" = 'dialing';

-- A call placed for a campaign names the contact and the attempt: unique together, so a second
-- process (or a restarted one) that tries to place an attempt already placed fails at the insert,
-- before Twilio is asked to dial.
ALTER TABLE "calls" ADD COLUMN "campaign_contact_id" UUID;
ALTER TABLE "calls" ADD COLUMN "campaign_attempt" INTEGER;
ALTER TABLE "calls" ADD CONSTRAINT "calls_campaign_attempt_check" CHECK ("campaign_attempt" IS NULL OR "campaign_attempt" >= 1);
ALTER TABLE "calls" ADD CONSTRAINT "calls_campaign_contact_id_fkey" FOREIGN KEY ("campaign_contact_id") REFERENCES "campaign_contacts"("id") ON DELETE SET NULL ON UPDATE CASCADE;
CREATE UNIQUE INDEX "calls_campaign_contact_id_campaign_attempt_key" ON "calls"("campaign_contact_id", "campaign_attempt");

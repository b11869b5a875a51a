-- Platform API: per-organization concurrency limit and refusals, outbound call fields (per-call
-- variables, answering-machine detection), webhook subscriptions and the webhook outbox.
-- Generated with
--   prisma migrate diff --from-schema-datamodel <schema at the previous commit> \
--     --to-schema-datamodel prisma/schema.prisma --script
-- plus the CHECK constraints and the partial index at the end.
-- AlterTable
ALTER TABLE "organizations" ADD COLUMN     "max_concurrent_calls" INTEGER;

-- AlterTable
ALTER TABLE "calls" ADD COLUMN     "answered_by" TEXT,
ADD COLUMN     "machine_detection" TEXT,
ADD COLUMN     "variables" JSONB NOT NULL DEFAULT '{}',
ALTER COLUMN "twilio_call_sid" DROP NOT NULL;

-- CreateTable
CREATE TABLE "call_refusals" (
    "id" BIGSERIAL NOT NULL,
    "organization_id" UUID NOT NULL,
    "direction" TEXT NOT NULL,
    "reason" TEXT NOT NULL,
    "from_number" TEXT,
    "to_number" TEXT,
    "limit" INTEGER NOT NULL,
    "active_calls" INTEGER NOT NULL,
    "at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "call_refusals_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "webhook_subscriptions" (
    "id" UUID NOT NULL,
    "organization_id" UUID NOT NULL,
    "url" TEXT NOT NULL,
    "events" TEXT[],
    "secret" TEXT NOT NULL,
    "description" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "deleted_at" TIMESTAMPTZ(3),

    CONSTRAINT "webhook_subscriptions_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "webhook_events" (
    "id" UUID NOT NULL,
    "organization_id" UUID NOT NULL,
    "type" TEXT NOT NULL,
    "call_id" UUID,
    "payload" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "webhook_events_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "webhook_deliveries" (
    "id" UUID NOT NULL,
    "organization_id" UUID NOT NULL,
    "event_id" UUID NOT NULL,
    "subscription_id" UUID NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'pending',
    "attempt_count" INTEGER NOT NULL DEFAULT 0,
    "next_attempt_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "locked_until" TIMESTAMPTZ(3),
    "give_up_after" TIMESTAMPTZ(3) NOT NULL,
    "last_attempt_at" TIMESTAMPTZ(3),
    "last_status_code" INTEGER,
    "last_error" TEXT,
    "delivered_at" TIMESTAMPTZ(3),
    "failed_at" TIMESTAMPTZ(3),
    "replay_of_id" UUID,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "webhook_deliveries_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "webhook_delivery_attempts" (
    "id" BIGSERIAL NOT NULL,
    "delivery_id" UUID NOT NULL,
    "attempt_number" INTEGER NOT NULL,
    "started_at" TIMESTAMPTZ(3) NOT NULL,
    "status_code" INTEGER,
    "latency_ms" DOUBLE PRECISION NOT NULL,
    "error" TEXT,
    "response_excerpt" TEXT,

    CONSTRAINT "webhook_delivery_attempts_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "call_refusals_organization_id_at_idx" ON "call_refusals"("organization_id", "at");

-- CreateIndex
CREATE INDEX "webhook_subscriptions_organization_id_idx" ON "webhook_subscriptions"("organization_id");

-- CreateIndex
CREATE INDEX "webhook_events_organization_id_created_at_idx" ON "webhook_events"("organization_id", "created_at");

-- CreateIndex
CREATE INDEX "webhook_deliveries_organization_id_created_at_id_idx" ON "webhook_deliveries"("organization_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "webhook_deliveries_event_id_idx" ON "webhook_deliveries"("event_id");

-- CreateIndex
CREATE UNIQUE INDEX "webhook_delivery_attempts_delivery_id_attempt_number_key" ON "webhook_delivery_attempts"("delivery_id", "attempt_number");

-- AddForeignKey
ALTER TABLE "call_refusals" ADD CONSTRAINT "call_refusals_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "webhook_subscriptions" ADD CONSTRAINT "webhook_subscriptions_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "webhook_events" ADD CONSTRAINT "webhook_events_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_event_id_fkey" FOREIGN KEY ("event_id") REFERENCES "webhook_events"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_subscription_id_fkey" FOREIGN KEY ("subscription_id") REFERENCES "webhook_subscriptions"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "webhook_delivery_attempts" ADD CONSTRAINT "webhook_delivery_attempts_delivery_id_fkey" FOREIGN KEY ("delivery_id") REFERENCES "webhook_deliveries"("id") ON DELETE CASCADE ON UPDATE CASCADE;


-- Enum-like text columns and sane numbers (see the init migration for why CHECKs, not enums).
ALTER TABLE "organizations" ADD CONSTRAINT "organizations_max_concurrent_calls_check"
    CHECK ("max_concurrent_calls" IS NULL OR "max_concurrent_calls" >= 0);
ALTER TABLE "calls" ADD CONSTRAINT "calls_machine_detection_check"
    CHECK ("machine_detection" IS NULL OR "machine_detection" IN ('Enable', 'DetectMessageEnd'));
-- Only an outbound call may wait (briefly) for its CallSid.
ALTER TABLE "calls" ADD CONSTRAINT "calls_twilio_call_sid_check"
    CHECK ("twilio_call_sid" IS NOT NULL OR "direction" = 'outbound');
ALTER TABLE "call_refusals" ADD CONSTRAINT "call_refusals_direction_check"
    CHECK ("direction" IN ('inbound', 'outbound'));
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_status_check"
    CHECK ("status" IN ('pending', 'delivered', 'failed'));

-- The worker's claim query only ever looks at pending rows: keep that index small.
CREATE INDEX "webhook_deliveries_pending_idx" ON "webhook_deliveries"("next_attempt_at") WHERE "status" = 'pending';

-- Live calls per organization (the concurrency check counts these).
CREATE INDEX "calls_live_by_organization_idx" ON "calls"("organization_id") WHERE "ended_at" IS NULL AND "end_reason" IS NULL;

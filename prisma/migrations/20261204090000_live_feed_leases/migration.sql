-- Caps that hold across processes (issue 26): open live call feeds are leased rows, counted by
-- every process against the organization's cap, renewed while open, left to expire by a process
-- that dies.
CREATE TABLE "live_feed_leases" (
    "id" UUID NOT NULL,
    "organization_id" UUID NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "live_feed_leases_pkey" PRIMARY KEY ("id")
);

CREATE INDEX "live_feed_leases_organization_id_expires_at_idx" ON "live_feed_leases"("organization_id", "expires_at");

ALTER TABLE "live_feed_leases" ADD CONSTRAINT "live_feed_leases_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

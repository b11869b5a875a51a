-- Call recordings (issue 15): one row per recorded call, written when the recording starts (status
-- 'recording'), completed at hang-up ('available', or 'failed' with the reason), and 'deleted' by
-- DELETE /v1/calls/:id/recording or the retention period of the organization. The row outlives the file
-- so the API can say a recording existed and when it was removed.
CREATE TABLE "call_recordings" (
    "call_id" UUID NOT NULL,
    "organization_id" UUID NOT NULL,
    "status" TEXT NOT NULL,
    "store" TEXT NOT NULL,
    "object_key" TEXT NOT NULL,
    "content_type" TEXT NOT NULL,
    "channels" TEXT NOT NULL,
    "sample_rate" INTEGER NOT NULL,
    "started_offset_ms" INTEGER NOT NULL,
    "duration_ms" INTEGER,
    "bytes" BIGINT,
    "failure" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "completed_at" TIMESTAMPTZ(3),
    "deleted_at" TIMESTAMPTZ(3),
    CONSTRAINT "call_recordings_pkey" PRIMARY KEY ("call_id"),
    CONSTRAINT "call_recordings_status_check" CHECK ("status" IN ('recording', 'available', 'failed', 'deleted')),
    CONSTRAINT "call_recordings_store_check" CHECK ("store" IN ('local', 's3')),
    CONSTRAINT "call_recordings_channels_check" CHECK ("channels" IN ('dual', 'mono')),
    CONSTRAINT "call_recordings_call_id_fkey" FOREIGN KEY ("call_id") REFERENCES "calls"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "call_recordings_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE
);
-- The retention sweep walks the stored recordings of each organization oldest first.
CREATE INDEX "call_recordings_retention_idx" ON "call_recordings"("organization_id", "created_at") WHERE "status" IN ('available', 'failed');

-- Days a recording is kept (null keeps them until deleted through the API).
ALTER TABLE "organizations" ADD COLUMN "recording_retention_days" INTEGER;
ALTER TABLE "organizations" ADD CONSTRAINT "organizations_recording_retention_days_check" CHECK ("recording_retention_days" IS NULL OR "recording_retention_days" BETWEEN 1 AND 3650);

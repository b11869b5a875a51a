-- Post-call analysis (issue 15). The row is both the result and the job: written in the transaction
-- that ends the call (when its agent config version has an analysis section), claimed by a worker
-- with FOR UPDATE SKIP LOCKED under a lease, retried with backoff, and completed with the summary,
-- the structured data (and why it failed validation, if it did) and the success verdict.
-- "config" is the analysis section the job runs with (copied from the config version, or the
-- current agent config on a re-run).
CREATE TABLE "call_analyses" (
    "call_id" UUID NOT NULL,
    "organization_id" UUID NOT NULL,
    "status" TEXT NOT NULL,
    "config" JSONB NOT NULL,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "next_attempt_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lease_until" TIMESTAMPTZ(3),
    "summary" TEXT,
    "structured_data" JSONB,
    "structured_data_errors" JSONB,
    "success" BOOLEAN,
    "success_reason" TEXT,
    "model" TEXT,
    "input_tokens" INTEGER NOT NULL DEFAULT 0,
    "output_tokens" INTEGER NOT NULL DEFAULT 0,
    "error" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "completed_at" TIMESTAMPTZ(3),
    CONSTRAINT "call_analyses_pkey" PRIMARY KEY ("call_id"),
    CONSTRAINT "call_analyses_status_check" CHECK ("status" IN ('pending', 'running', 'completed', 'failed')),
    CONSTRAINT "call_analyses_call_id_fkey" FOREIGN KEY ("call_id") REFERENCES "calls"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "call_analyses_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE
);
-- What the worker polls: due jobs only.
CREATE INDEX "call_analyses_due_idx" ON "call_analyses"("next_attempt_at") WHERE "status" IN ('pending', 'running');

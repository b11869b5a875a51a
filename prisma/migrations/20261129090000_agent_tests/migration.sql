-- Scenario tests for agents (issue 14): suites of caller turns with expectations, and their runs.
-- A run places one web call per scenario: calls.test_run_id ties those calls to the run, so the
-- console can show them and the web-call edge can simulate what a test call cannot really do (a
-- transfer to a phone number).
CREATE TABLE "agent_test_suites" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "organization_id" UUID NOT NULL,
    "agent_id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "definition" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "agent_test_suites_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "agent_test_suites_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "agent_test_suites_agent_id_fkey" FOREIGN KEY ("agent_id") REFERENCES "agents"("id") ON DELETE CASCADE ON UPDATE CASCADE
);
-- Storing a suite under a name it already has replaces it (a customer's CI re-sends the same file).
CREATE UNIQUE INDEX "agent_test_suites_agent_id_name_key" ON "agent_test_suites"("agent_id", "name");

CREATE TABLE "agent_test_runs" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "organization_id" UUID NOT NULL,
    "agent_id" UUID NOT NULL,
    "suite_id" UUID NOT NULL,
    "suite_name" TEXT NOT NULL,
    "agent_config_version" INTEGER NOT NULL,
    "scenario_count" INTEGER NOT NULL,
    "status" TEXT NOT NULL,
    "error" TEXT,
    "results" JSONB NOT NULL DEFAULT '[]',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "deadline_at" TIMESTAMPTZ(3) NOT NULL,
    "finished_at" TIMESTAMPTZ(3),
    CONSTRAINT "agent_test_runs_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "agent_test_runs_status_check" CHECK ("status" IN ('running', 'passed', 'failed', 'error')),
    CONSTRAINT "agent_test_runs_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "agent_test_runs_agent_id_fkey" FOREIGN KEY ("agent_id") REFERENCES "agents"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "agent_test_runs_suite_id_fkey" FOREIGN KEY ("suite_id") REFERENCES "agent_test_suites"("id") ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE INDEX "agent_test_runs_agent_id_created_at_idx" ON "agent_test_runs"("agent_id", "created_at" DESC);

ALTER TABLE "calls" ADD COLUMN "test_run_id" UUID;
ALTER TABLE "calls" ADD CONSTRAINT "calls_test_run_id_fkey" FOREIGN KEY ("test_run_id") REFERENCES "agent_test_runs"("id") ON DELETE SET NULL ON UPDATE CASCADE;
-- Only web calls are placed by the scenario runner.
ALTER TABLE "calls" ADD CONSTRAINT "calls_test_run_id_check" CHECK ("test_run_id" IS NULL OR "direction" = 'web');
CREATE INDEX "calls_test_run_id_idx" ON "calls"("test_run_id") WHERE "test_run_id" IS NOT NULL;

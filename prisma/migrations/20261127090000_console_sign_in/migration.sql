-- First run (issue 14): a server started without ADMIN_API_KEY prints a one-time sign-in link for the
-- console. Only the sha256 of the link token is stored. Claiming the link marks it used and creates
-- the first admin key of the organization, shown once.
CREATE TABLE "console_sign_in_links" (
    "id" UUID NOT NULL,
    "organization_id" UUID NOT NULL,
    "token_hash" TEXT NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "used_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "console_sign_in_links_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "console_sign_in_links_token_hash_key" ON "console_sign_in_links"("token_hash");
CREATE INDEX "console_sign_in_links_organization_id_idx" ON "console_sign_in_links"("organization_id");
ALTER TABLE "console_sign_in_links" ADD CONSTRAINT "console_sign_in_links_organization_id_fkey"
    FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- The console's live call list polls the calls of an organization changed since a moment.
CREATE INDEX "calls_organization_id_updated_at_idx" ON "calls"("organization_id", "updated_at");

-- Calls from the browser (issue 14): a third direction, 'web'. Such a call has no Twilio account
-- and no CallSid, and its media stream is the console's WebSocket (/v1/web-calls).
ALTER TABLE "calls" DROP CONSTRAINT "calls_direction_check";
ALTER TABLE "calls" ADD CONSTRAINT "calls_direction_check" CHECK ("direction" IN ('inbound', 'outbound', 'web'));
ALTER TABLE "call_refusals" DROP CONSTRAINT "call_refusals_direction_check";
ALTER TABLE "call_refusals" ADD CONSTRAINT "call_refusals_direction_check" CHECK ("direction" IN ('inbound', 'outbound', 'web'));
ALTER TABLE "calls" DROP CONSTRAINT "calls_twilio_call_sid_check";
ALTER TABLE "calls" ADD CONSTRAINT "calls_twilio_call_sid_check" CHECK ("twilio_call_sid" IS NOT NULL OR "direction" IN ('outbound', 'web'));
ALTER TABLE "calls" ALTER COLUMN "twilio_account_sid" DROP NOT NULL;
ALTER TABLE "calls" ADD CONSTRAINT "calls_twilio_account_sid_check" CHECK (("twilio_account_sid" IS NULL) = ("direction" = 'web'));

-- Admission by inference capacity (issue 17): a call refused because the instance's inference
-- workers are planned full (INFERENCE_MAX_UTILISATION) is counted with reason 'capacity'.
ALTER TABLE "call_refusals" DROP CONSTRAINT "call_refusals_reason_check";
ALTER TABLE "call_refusals" ADD CONSTRAINT "call_refusals_reason_check"
    CHECK ("reason" IN ('concurrency_limit', 'budget_exceeded', 'capacity'));

-- Honest latency waterfalls (issue 13): the arrival of the frame that completed the end-of-turn
-- silence (so queueing before the server acts shows as its own step), and when a cut reply was cut.
ALTER TABLE "turn_latencies" ADD COLUMN "end_of_turn_frame_ms" DOUBLE PRECISION;
ALTER TABLE "turn_latencies" ADD COLUMN "interrupted_at_ms" DOUBLE PRECISION;

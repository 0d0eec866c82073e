/**
 * Migration 2: an index for the monitor's dashboard series.
 *
 * `metrics:series` buckets ended instances by `ended_at` over a time range (throughput per minute,
 * P50/P99 durations); without an index that is a scan of every instance. The index is partial
 * (`ended_at IS NOT NULL`), so the frequent status changes of live instances never touch it: a row
 * enters it once, when its instance ends. It covers the query (status, created_at for the
 * duration, workflow_id for the per-workflow filter), so no table row is read.
 */
export const sql = /* sql */ `
CREATE INDEX instance_ended ON instance (ended_at, status, created_at, workflow_id) WHERE ended_at IS NOT NULL;
`;

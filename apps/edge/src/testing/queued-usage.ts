import type { JobType, Queue } from 'bullmq';
import { USAGE_JOB_NAME } from '../usage/usage-job';

const EVERY_STATE: JobType[] = ['waiting', 'active', 'completed', 'failed', 'delayed', 'prioritized'];

/**
 * The response ids of the usage records queued on `queue`, as billing reads its jobs: each
 * `usage-batch` job's records in order, or an earlier-shape job's one record. A record queued in
 * two jobs is listed twice (billing's ledger counts it once).
 */
export async function queuedResponseIds(queue: Queue, states: JobType[] = EVERY_STATE): Promise<string[]> {
  const jobs = await queue.getJobs(states, 0, -1);
  return jobs.flatMap((job) => {
    const data = job.data as { records?: { responseId?: string }[]; responseId?: string };
    return job.name === USAGE_JOB_NAME ? (data.records ?? []).map((r) => r.responseId ?? '') : [data.responseId ?? ''];
  });
}

/** How many distinct records are queued on `queue` (see {@link queuedResponseIds}). */
export async function queuedRecordCount(queue: Queue, states?: JobType[]): Promise<number> {
  return new Set(await queuedResponseIds(queue, states)).size;
}

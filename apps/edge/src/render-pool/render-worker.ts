// A thread of the edge's render pool (render-pool.ts): renders what the event loop should not.
import { getProfile, listProfileIds, runRenderTask, type RenderTask } from '@fastloop/model-profiles';
import { serveWorkerTasks } from '@fastloop/service-kit';

// Vocabulary tables are per thread: build them before the first task needs them.
for (const id of listProfileIds()) getProfile(id).warmUp();

serveWorkerTasks((task: RenderTask, { deadline }) => runRenderTask(task, deadline));

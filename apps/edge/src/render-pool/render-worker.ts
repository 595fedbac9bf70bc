// A thread of the edge's render pool (render-pool.ts): renders, and parses large JSON bodies, off the event loop.
import {
  getProfile,
  listProfileIds,
  runRenderTask,
  type RenderTask,
  type RenderTaskResult,
} from '@fastloop/model-profiles';
import { serveWorkerTasks } from '@fastloop/service-kit';
import { isJsonTask, jsonReplyTransfer, runJsonTask, type JsonTask, type SerializedJson } from './json-task';

// Vocabulary tables are per thread: build them before the first task needs them.
for (const id of listProfileIds()) getProfile(id).warmUp();

serveWorkerTasks<RenderTask | JsonTask, RenderTaskResult | SerializedJson>(
  (task, { deadline }) => (isJsonTask(task) ? runJsonTask(task) : runRenderTask(task, deadline)),
  jsonReplyTransfer,
);

export * from './worker-pool';
export * from './worker-pool-errors';
export * from './serve-worker-tasks';

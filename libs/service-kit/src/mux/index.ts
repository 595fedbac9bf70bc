export * from './mux-frames';
export * from './mux-client';
export * from './mux-server';
export * from './unary-calls';

/**
 * Generated protobuf code for every internal contract, one namespace per proto package.
 * The files under ./generated are written by `npm run codegen` and never edited by hand.
 */
export * as healthV1 from './generated/grpc/health/v1/health';
export * as safetyV1 from './generated/fastloop/safety/v1/safety';
export * as routerV1 from './generated/fastloop/router/v1/router';
export * as inferenceV1 from './generated/fastloop/inference/v1/inference';
export * as responsesV1 from './generated/fastloop/responses/v1/responses';
export * as billingV1 from './generated/fastloop/billing/v1/usage';
export * as muxV1 from './generated/fastloop/mux/v1/mux';
export { encodeMessage, messageWriter } from './message-writer';

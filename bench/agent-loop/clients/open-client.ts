import type { Mode } from '../options';
import { GrpcTurnClient } from './grpc-client';
import { HttpTurnClient } from './http-client';
import type { TurnClient } from './turn-client';
import { WsTurnClient } from './ws-client';

export type { ResponseLike, TurnClient, TurnResult } from './turn-client';
export { TurnError } from './turn-client';

/** Where the stack listens and how to authenticate (a subset of the launcher's Stack). */
export interface Endpoints {
  url: string;
  wsUrl: string;
  grpcAddress: string;
  apiKey: string;
}

/** Opens a fresh client (a new socket or stream for the persistent modes) for one rollout. */
export async function openClient(mode: Mode, at: Endpoints): Promise<TurnClient> {
  switch (mode) {
    case 'http-stateless':
    case 'http-previous':
      return new HttpTurnClient(mode, at.url, at.apiKey);
    case 'ws':
      return WsTurnClient.open(at.wsUrl, at.apiKey);
    case 'grpc':
      return GrpcTurnClient.open(at.grpcAddress, at.apiKey);
  }
}

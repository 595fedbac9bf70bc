import type { Logger } from 'pino';
import { getProfile, type ModelProfile } from '@fastloop/model-profiles';
import { ConfigError } from '@fastloop/service-kit';
import type { InferenceConfig } from './config';
import type { Engine } from './engine';
import { SimEngine } from './engines/sim/sim-engine';

/** Resolves INFERENCE_PROFILE; an unknown id is a configuration error naming the field. */
export function loadProfile(config: Pick<InferenceConfig, 'INFERENCE_PROFILE'>): ModelProfile {
  try {
    return getProfile(config.INFERENCE_PROFILE);
  } catch (cause) {
    throw new ConfigError(`invalid configuration: INFERENCE_PROFILE: unknown model profile '${config.INFERENCE_PROFILE}'`, { cause });
  }
}

/** Builds the engine INFERENCE_ENGINE names. Engines added later (openai-compatible, llamacpp) go here. */
export function createEngine(config: InferenceConfig, profile: ModelProfile, logger: Logger): Engine {
  switch (config.INFERENCE_ENGINE) {
    case 'sim':
      return new SimEngine({
        profile,
        pace: {
          ttftMs: config.SIM_TTFT_MS,
          prefillTokensPerSecond: config.SIM_PREFILL_TOKENS_PER_SECOND,
          tokensPerSecond: config.SIM_TOKENS_PER_SECOND,
          jitter: config.SIM_JITTER,
        },
        script: { toolCalls: config.SIM_TOOL_CALLS, answerWords: config.SIM_ANSWER_WORDS },
        logger: logger.child({ engine: 'sim', simulated: true }),
      });
  }
}

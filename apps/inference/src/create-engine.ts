import type { Logger } from 'pino';
import { ProfileNotFoundError, resolveProfile, type ModelProfile } from '@fastloop/model-profiles';
import { ConfigError } from '@fastloop/service-kit';
import { profileIdOf, type InferenceConfig } from './config';
import type { Engine } from './engine';
import { LlamaCppEngine } from './engines/llamacpp/llamacpp-engine';
import { OpenAiCompatibleEngine } from './engines/openai-compatible/openai-compatible-engine';
import { SimEngine } from './engines/sim/sim-engine';

/**
 * Resolves the worker's profile (INFERENCE_PROFILE or the engine's default); an unknown id, or a
 * model file that cannot be read, is a configuration error naming the field.
 */
export async function loadProfile(
  config: Pick<InferenceConfig, 'INFERENCE_ENGINE' | 'INFERENCE_PROFILE' | 'LLAMACPP_MODEL_PATH'>,
): Promise<ModelProfile> {
  const id = profileIdOf(config);
  try {
    return await resolveProfile(id);
  } catch (cause) {
    const field = config.INFERENCE_PROFILE ? 'INFERENCE_PROFILE' : 'LLAMACPP_MODEL_PATH';
    const reason = cause instanceof ProfileNotFoundError ? `unknown model profile '${id}'` : (cause as Error).message;
    throw new ConfigError(`invalid configuration: ${field}: ${reason}`, { cause });
  }
}

/** Builds the engine INFERENCE_ENGINE names. */
export async function createEngine(config: InferenceConfig, profile: ModelProfile, logger: Logger): Promise<Engine> {
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
        guard: { blockTerms: config.SIM_GUARD_BLOCK_TERMS },
        sharedPrefill: config.SIM_SHARED_PREFILL,
        logger: logger.child({ engine: 'sim', simulated: true }),
      });
    case 'llamacpp':
      return LlamaCppEngine.create({
        modelPath: config.LLAMACPP_MODEL_PATH ?? '',
        profile,
        sequences: config.LLAMACPP_SEQUENCES,
        contextSize: config.LLAMACPP_CONTEXT_SIZE,
        threads: config.LLAMACPP_THREADS,
        gpuLayers: config.LLAMACPP_GPU_LAYERS,
        logger: logger.child({ engine: 'llamacpp' }),
      });
    case 'openai-compatible':
      return new OpenAiCompatibleEngine({
        baseUrl: config.OPENAI_COMPAT_URL ?? '',
        dialect: config.OPENAI_COMPAT_DIALECT,
        model: config.OPENAI_COMPAT_MODEL,
        slots: config.OPENAI_COMPAT_SLOTS,
        apiKey: config.OPENAI_COMPAT_API_KEY,
        logger: logger.child({ engine: 'openai-compatible' }),
      });
  }
}

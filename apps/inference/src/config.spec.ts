import { ConfigError } from '@fastloop/service-kit';
import { loadInferenceConfig, profileIdOf } from './config';

describe('loadInferenceConfig', () => {
  it('has defaults that work locally', () => {
    expect(loadInferenceConfig({ env: {} })).toMatchObject({
      GRPC_PORT: 50053,
      ADMIN_PORT: 9093,
      BIND_HOST: '127.0.0.1',
      WORKER_ID: 'sim-0',
      INFERENCE_ENGINE: 'sim',
      INFERENCE_MAX_CONCURRENCY: 64,
      INFERENCE_SESSION_CACHE_TOKENS: 4_000_000,
      INFERENCE_PREFIX_CACHING: true,
      SIM_TTFT_MS: 50,
      SIM_PREFILL_TOKENS_PER_SECOND: 20_000,
      SIM_TOKENS_PER_SECOND: 1_000,
      SIM_JITTER: 0,
      SIM_TOOL_CALLS: 2,
      SIM_ANSWER_WORDS: 40,
    });
  });

  it("speaks harmony with the sim and the model file's own profile with llamacpp", () => {
    expect(profileIdOf(loadInferenceConfig({ env: {} }))).toBe('harmony-o200k');
    expect(
      profileIdOf(loadInferenceConfig({ env: { INFERENCE_ENGINE: 'llamacpp', LLAMACPP_MODEL_PATH: '/m/x.gguf' } })),
    ).toBe('gguf:/m/x.gguf');
  });

  it('requires LLAMACPP_MODEL_PATH with the llamacpp engine', () => {
    expect(() => loadInferenceConfig({ env: { INFERENCE_ENGINE: 'llamacpp' } })).toThrow(/LLAMACPP_MODEL_PATH/);
  });

  it('rejects an unknown engine with an error naming INFERENCE_ENGINE', () => {
    expect(() => loadInferenceConfig({ env: { INFERENCE_ENGINE: 'vllm' } })).toThrow(ConfigError);
    expect(() => loadInferenceConfig({ env: { INFERENCE_ENGINE: 'vllm' } })).toThrow(/INFERENCE_ENGINE/);
  });

  it('turns content prefix caching off with INFERENCE_PREFIX_CACHING=false', () => {
    expect(loadInferenceConfig({ env: { INFERENCE_PREFIX_CACHING: 'false' } }).INFERENCE_PREFIX_CACHING).toBe(false);
  });

  it('rejects a jitter outside 0..1 naming SIM_JITTER', () => {
    expect(() => loadInferenceConfig({ env: { SIM_JITTER: '1.5' } })).toThrow(/SIM_JITTER/);
  });
});

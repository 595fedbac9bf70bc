import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import type { TestDependency } from './test-dependency';

const REPO_ROOT = resolve(__dirname, '../../../..');

/** The small real model the llama.cpp tests run, and where it was looked for. */
export interface TestModel extends TestDependency {
  /** Absolute path of the GGUF file. */
  path: string;
}

/**
 * stories260K (a 1.2 MB GGUF): `FASTLOOP_TEST_MODEL` when set, else `shared/models/stories260K.gguf`
 * beside the repository (`../shared/models/` from its root), where the project's shared folder lies.
 * The same variable is an input of Nx's cache key (nx.json `testEnvironment`), so a result cached
 * without the model never stands in for a run with it.
 */
export function testModel(env: NodeJS.ProcessEnv = process.env): TestModel {
  const path = resolve(REPO_ROOT, env.FASTLOOP_TEST_MODEL || '../shared/models/stories260K.gguf');
  return {
    path,
    name: `the model file ${path}`,
    available: existsSync(path) && statSync(path).isFile(),
    howToGet:
      "it is the project's shared/models/stories260K.gguf (beside the repository, as ../shared); " +
      'or set FASTLOOP_TEST_MODEL to a copy of it',
  };
}

/** kubectl (for `kubectl kustomize`) or kustomize on PATH, which the rendered-manifest tests run. */
export function kubernetesRendererDependency(available: boolean): TestDependency {
  return {
    name: 'kubectl or kustomize on PATH',
    available,
    howToGet: "install Debian's kubernetes-client (apt-get install kubernetes-client; .ci/run does)",
  };
}

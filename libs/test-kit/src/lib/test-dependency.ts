/** Something outside the repository that some tests need: a model file, a system tool. */
export interface TestDependency {
  /** What is needed, as the reader of a failure would look for it ("kubectl on PATH"). */
  name: string;
  /** Whether it is here. */
  available: boolean;
  /** How to get it, one sentence. */
  howToGet: string;
}

/**
 * True under CI (`CI` set, and not "", "0" or "false", as CI services and `.ci/run` set it): there
 * every test must run, so a missing dependency fails instead of skipping.
 */
export function ciRequiresEverything(env: NodeJS.ProcessEnv = process.env): boolean {
  const ci = (env.CI ?? '').trim().toLowerCase();
  return ci !== '' && ci !== '0' && ci !== 'false';
}

/** What a block of tests does about `dependency`: run, skip (outside CI) or fail (under CI). */
export function gateOf(dependency: TestDependency, env: NodeJS.ProcessEnv = process.env): 'run' | 'skip' | 'fail' {
  if (dependency.available) return 'run';
  return ciRequiresEverything(env) ? 'fail' : 'skip';
}

/** The one line that says what is missing and how to get it. */
export function missingMessage(dependency: TestDependency): string {
  return `${dependency.name} is missing: ${dependency.howToGet}`;
}

/**
 * `describe` when `dependency` is here. When it is not: on a developer's machine, `describe.skip`
 * and one line on stderr naming what is missing and how to get it; under CI
 * ({@link ciRequiresEverything}), a block whose one test fails with that message, so a missing
 * dependency fails the run instead of passing as skipped tests.
 */
export function describeWhenAvailable(dependency: TestDependency, env: NodeJS.ProcessEnv = process.env): jest.Describe {
  const gate = gateOf(dependency, env);
  if (gate === 'run') return describe;
  if (gate === 'skip') {
    process.stderr.write(`${missingMessage(dependency)} (skipping the tests that need it; under CI=true they fail)\n`);
    return describe.skip;
  }
  const failing = (name: string | number | jest.FunctionLike) =>
    describe(String(name), () => {
      it(`needs ${dependency.name} (CI runs every test)`, () => {
        throw new Error(`CI=${env.CI}: ${missingMessage(dependency)}`);
      });
    });
  return Object.assign(failing, {
    only: failing,
    skip: describe.skip,
    each: describe.each,
  }) as unknown as jest.Describe;
}

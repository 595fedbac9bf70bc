import { ciRequiresEverything, gateOf, missingMessage } from './test-dependency';
import { kubernetesRendererDependency, testModel } from './known-dependencies';

describe('test dependencies', () => {
  it('reads CI the way CI services set it: any value but "", "0" and "false"', () => {
    expect(ciRequiresEverything({})).toBe(false);
    for (const off of ['', '0', 'false', 'FALSE', ' ']) expect(ciRequiresEverything({ CI: off })).toBe(false);
    for (const on of ['true', '1', 'yes', 'TRUE']) expect(ciRequiresEverything({ CI: on })).toBe(true);
  });

  it('runs what is there, skips what is missing outside CI and fails it under CI', () => {
    const here = { name: 'x', available: true, howToGet: 'y' };
    const missing = { ...here, available: false };
    expect(gateOf(here, { CI: 'true' })).toBe('run');
    expect(gateOf(here, {})).toBe('run');
    expect(gateOf(missing, {})).toBe('skip');
    expect(gateOf(missing, { CI: 'true' })).toBe('fail');
  });

  it('finds the model where FASTLOOP_TEST_MODEL says, and says how to get it when it is not there', () => {
    const absent = testModel({ FASTLOOP_TEST_MODEL: '/nonexistent/stories260K.gguf' });
    expect(absent).toMatchObject({ path: '/nonexistent/stories260K.gguf', available: false });
    expect(missingMessage(absent)).toMatch(
      /^the model file \/nonexistent\/stories260K\.gguf is missing: .*shared\/models\/stories260K\.gguf.*FASTLOOP_TEST_MODEL/,
    );
    expect(testModel({ FASTLOOP_TEST_MODEL: __filename })).toMatchObject({ path: __filename, available: true });
    expect(testModel({}).path).toMatch(/\/shared\/models\/stories260K\.gguf$/);
  });

  it('names kubectl and the package that has it', () => {
    expect(missingMessage(kubernetesRendererDependency(false))).toMatch(/kubectl.*kubernetes-client/);
  });
});

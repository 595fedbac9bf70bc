import { Classifier } from '../classifier';
import { DEFAULT_ACTIONS, PolicyBook, type Actions, type Policies } from '../policy';

/** A classifier with the built-in rules and the given policy, for tests. */
export function testClassifier(
  options: {
    actions?: Partial<Actions>;
    policies?: Partial<Policies>;
    threshold?: number;
    maxItemBytes?: number;
    maxRequestBytes?: number;
    maxFindings?: number;
    sliceChars?: number;
    pauseAfterMs?: number;
  } = {},
): Classifier {
  const policies = new PolicyBook({
    policies: { tenants: {}, models: {}, ...options.policies },
    defaultActions: { ...DEFAULT_ACTIONS, ...options.actions },
    injectionThreshold: options.threshold ?? 10,
  });
  return new Classifier({
    stateSecret: 'classifier-test-secret',
    maxItemBytes: options.maxItemBytes ?? 1 << 20,
    maxRequestBytes: options.maxRequestBytes,
    maxFindings: options.maxFindings,
    sliceChars: options.sliceChars,
    pauseAfterMs: options.pauseAfterMs,
    policies,
  });
}

import { CacheAwarePolicy, type CacheAwareOptions } from './cache-aware-policy';
import type { PlacementPolicy } from './placement-types';
import { HashPolicy, LeastLoadedPolicy, RoundRobinPolicy } from './simple-policies';

/** `ROUTER_POLICY` values. */
export const POLICY_NAMES = ['cache-aware', 'round-robin', 'least-loaded', 'hash'] as const;
export type PolicyName = (typeof POLICY_NAMES)[number];

/** The placement policy `ROUTER_POLICY` names. */
export function createPolicy(name: PolicyName, options: CacheAwareOptions): PlacementPolicy {
  switch (name) {
    case 'cache-aware':
      return new CacheAwarePolicy(options);
    case 'round-robin':
      return new RoundRobinPolicy();
    case 'least-loaded':
      return new LeastLoadedPolicy();
    case 'hash':
      return new HashPolicy();
  }
}

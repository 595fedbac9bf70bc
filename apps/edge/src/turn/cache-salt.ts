/** The inference `cache_salt` of a tenant (one definition, shared with the workers' slot shares). */
export { tenantCacheSalt as cacheSaltOf } from '@fastloop/service-kit';

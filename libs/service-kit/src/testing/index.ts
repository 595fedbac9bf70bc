/** Fakes for tests of services that use service-kit (never imported by shipped code). */
export * from './fake-dns-server';
export * from './tenant-attacks';

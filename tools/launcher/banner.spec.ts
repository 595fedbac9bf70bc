import { renderBanner } from './banner';

const inputs = {
  url: 'http://127.0.0.1:8080',
  wsUrl: 'ws://127.0.0.1:8080/v1/responses',
  grpcAddress: '127.0.0.1:50051',
  apiKey: 'sk-fastloop-dev',
  redisUrl: 'redis://127.0.0.1:6379',
  redisSource: 'from REDIS_URL',
  logDir: '/repo/.fastloop/logs',
  cwd: '/repo',
  services: { edge: { pid: 42, ports: { http: 8080, grpc: 50051, admin: 9000 } } },
};

describe('renderBanner', () => {
  const banner = renderBanner(inputs);

  it('shows where the stack listens and the key to use', () => {
    expect(banner).toContain('http://127.0.0.1:8080/v1');
    expect(banner).toContain('ws://127.0.0.1:8080/v1/responses');
    expect(banner).toContain('127.0.0.1:50051');
    expect(banner).toContain('sk-fastloop-dev');
    expect(banner).toContain('.fastloop/logs/<service>.log');
    expect(banner).toMatch(/edge\s+pid 42\s+http=8080 grpc=50051 admin=9000/);
  });

  it('offers curl for a response, a streamed response and the model list', () => {
    expect(banner).toContain(`curl -s http://127.0.0.1:8080/v1/responses -H "Authorization: Bearer sk-fastloop-dev"`);
    expect(banner).toContain(`-d '{"model":"fastloop-sim","input":"hello"}'`);
    expect(banner).toContain(`-d '{"model":"fastloop-sim","input":"hello","stream":true}'`);
    expect(banner).toContain('curl -s http://127.0.0.1:8080/v1/models -H "Authorization: Bearer sk-fastloop-dev"');
  });

  it('offers wscat with a response.create frame and a node one-liner using ws', () => {
    expect(banner).toContain(
      'npx wscat -c ws://127.0.0.1:8080/v1/responses -H "Authorization: Bearer sk-fastloop-dev"',
    );
    expect(banner).toContain('{"type":"response.create","model":"fastloop-sim","input":"hello"}');
    expect(banner).toMatch(/node -e '.*require\("ws"\).*response\.create.*'/);
  });

  it('prints a node one-liner that is valid JavaScript', () => {
    const script = /node -e '(.*)'/.exec(banner)?.[1] ?? '';
    expect(() => new Function('require', script)).not.toThrow();
  });
});

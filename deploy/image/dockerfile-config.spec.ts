import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DOCKERFILE, runtimeConfig, umociConfigArgs } from './dockerfile-config';

const dockerfile = readFileSync(DOCKERFILE, 'utf8');
const repoRoot = join(__dirname, '..', '..');

describe('the Dockerfile (the one description of how the image runs)', () => {
  it('runs node as uid 10001 in /app with the edge by default', () => {
    const config = runtimeConfig(dockerfile);
    expect(config).toMatchObject({ user: '10001:10001', workdir: '/app', entrypoint: ['node'], cmd: ['dist/edge.js'] });
    expect(config.env).toMatchObject({
      NODE_ENV: 'production',
      BIND_HOST: '0.0.0.0',
      USAGE_OUTBOX_DIR: '/app/.fastloop/outbox',
    });
    expect(config.exposedPorts).toContain('8080/tcp');
  });

  it('builds on Node 24', () => {
    expect(dockerfile).toMatch(/^ARG NODE_IMAGE=node:24-bookworm-slim$/m);
    const pinned = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')).devDependencies.node as string;
    expect(pinned).toMatch(/^24\./);
  });

  it('stages /app with build-bundles.mjs --stage, as deploy/image/build.sh does', () => {
    expect(dockerfile).toMatch(/RUN node deploy\/build-bundles\.mjs --stage \/out\b/);
    expect(readFileSync(join(__dirname, 'build.sh'), 'utf8')).toMatch(
      /deploy\/build-bundles\.mjs --stage "\$work\/app"/,
    );
  });

  it('lets every path it copies from the context, and every file: package npm ci needs, through the .dockerignore', () => {
    const allowed = readFileSync(`${DOCKERFILE}.dockerignore`, 'utf8')
      .split('\n')
      .filter((l) => l.startsWith('!'))
      .map((l) => l.slice(1).replace(/\/$/, ''));
    const copied = [...dockerfile.matchAll(/^COPY (?!--from)(.+) \S+$/gm)].flatMap((m) => m[1].split(/\s+/));
    const lock = JSON.parse(readFileSync(join(repoRoot, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { link?: boolean; resolved?: string }>;
    };
    const localPackages = Object.entries(lock.packages)
      .filter(([path, p]) => path !== '' && !path.includes('node_modules/'))
      .map(([path]) => path);
    expect(localPackages).toContain('tools/npm-no-gpu-binary');
    const needed = [...copied, ...localPackages].map((p) => p.replace(/^\.\//, '').replace(/\/$/, ''));
    const refused = needed.filter((p) => !allowed.some((a) => p === a || p.startsWith(`${a}/`)));
    expect(refused).toEqual([]);
  });
});

describe('runtimeConfig', () => {
  const stage = (body: string) => `FROM a AS build\nUSER 0\nFROM b\n${body}`;

  it('reads only the last stage, joining continuation lines', () => {
    const config = runtimeConfig(
      stage('ENV A=1 \\\n    B=2\nWORKDIR /srv\nUSER 7:8\nEXPOSE 80 53/udp\nENTRYPOINT ["x"]\nCMD ["y", "z"]'),
    );
    expect(config).toEqual({
      env: { A: '1', B: '2' },
      workdir: '/srv',
      user: '7:8',
      exposedPorts: ['80/tcp', '53/udp'],
      entrypoint: ['x'],
      cmd: ['y', 'z'],
    });
    expect(umociConfigArgs(config)).toEqual([
      '--config.user=7:8',
      '--config.workingdir=/srv',
      '--config.env=A=1',
      '--config.env=B=2',
      '--config.exposedports=80/tcp',
      '--config.exposedports=53/udp',
      '--config.entrypoint=x',
      '--config.cmd=y',
      '--config.cmd=z',
    ]);
  });

  it('refuses forms it would misread instead of building an image that runs differently', () => {
    expect(() => runtimeConfig(stage('USER app\nENTRYPOINT ["x"]\nCMD ["y"]'))).toThrow(/numeric/);
    expect(() => runtimeConfig(stage('USER 1\nENTRYPOINT ["x"]\nCMD node y'))).toThrow();
    expect(() => runtimeConfig(stage('USER 1\nENV A="b c"\nENTRYPOINT ["x"]\nCMD ["y"]'))).toThrow(/ENV/);
    expect(() => runtimeConfig(stage('ENTRYPOINT ["x"]\nCMD ["y"]'))).toThrow(/USER/);
  });
});

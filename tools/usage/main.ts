/**
 * `npm run usage [-- --start YYYY-MM-DD --end YYYY-MM-DD --model m --tenant t]`: prints the
 * edge's `GET /v1/usage` as a table. FASTLOOP_URL (default http://127.0.0.1:8080) and
 * FASTLOOP_API_KEY (else OPENAI_API_KEY, else the launcher's dev key) say where and as whom.
 */
import { parseArgs } from 'node:util';
import { usageListSchema } from '@fastloop/protocol';
import { formatUsageTable } from './usage-table';

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      start: { type: 'string' },
      end: { type: 'string' },
      model: { type: 'string' },
      tenant: { type: 'string' },
      json: { type: 'boolean' },
    },
  });
  const base = process.env.FASTLOOP_URL ?? 'http://127.0.0.1:8080';
  const key = process.env.FASTLOOP_API_KEY ?? process.env.OPENAI_API_KEY ?? 'sk-fastloop-dev';
  const url = new URL('/v1/usage', base);
  for (const name of ['start', 'end', 'model', 'tenant'] as const)
    if (values[name]) url.searchParams.set(name, values[name]);
  const res = await fetch(url, { headers: { authorization: `Bearer ${key}` } });
  const body: unknown = await res.json();
  if (!res.ok) {
    const error = (body as { error?: { message?: string; code?: string } }).error;
    process.stderr.write(
      `GET ${url.pathname}${url.search}: ${res.status} ${error?.code ?? ''}: ${error?.message ?? ''}\n`,
    );
    process.exit(1);
  }
  const list = usageListSchema.parse(body);
  process.stdout.write(values.json ? `${JSON.stringify(list, null, 2)}\n` : formatUsageTable(list));
}

main().catch((err: unknown) => {
  process.stderr.write(
    `usage: ${err instanceof Error ? err.message : String(err)} (is the stack running? npm start)\n`,
  );
  process.exit(1);
});

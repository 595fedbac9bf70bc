import { relative } from 'node:path';
import type { ServicePorts } from './service-specs';

/** The model the simulated worker serves under its default name. */
export const DEFAULT_MODEL = 'fastloop-sim';

/** What the banner needs to know about a running stack. */
export interface BannerInputs {
  readonly url: string;
  readonly wsUrl: string;
  readonly grpcAddress: string;
  readonly apiKey: string;
  readonly redisUrl: string;
  readonly redisSource: string;
  readonly logDir: string;
  readonly services: Readonly<Record<string, { readonly pid: number; readonly ports: ServicePorts }>>;
  /** Folder paths are shown relative to this (the repository root). */
  readonly cwd: string;
  readonly model?: string;
}

/** The copy-paste block `npm start` prints once the stack is ready. */
export function renderBanner(b: BannerInputs): string {
  const model = b.model ?? DEFAULT_MODEL;
  const auth = `-H "Authorization: Bearer ${b.apiKey}"`;
  const json = `-H "Content-Type: application/json"`;
  const logDir = relative(b.cwd, b.logDir) || '.';
  const services = Object.entries(b.services)
    .map(
      ([name, s]) =>
        `    ${name.padEnd(12)} pid ${String(s.pid).padEnd(8)} ${Object.entries(s.ports)
          .map(([k, v]) => `${k}=${v}`)
          .join(' ')}`,
    )
    .join('\n');
  const wsOneLiner =
    `node -e 'const W=require("ws");const s=new W("${b.wsUrl}",{headers:{Authorization:"Bearer ${b.apiKey}"}});` +
    `s.on("open",()=>s.send(JSON.stringify({type:"response.create",model:"${model}",input:"hello"})));` +
    `s.on("message",(d)=>{const e=JSON.parse(d);if(e.type==="response.output_text.delta")process.stdout.write(e.delta);` +
    `if(["response.completed","response.failed","response.incomplete","error"].includes(e.type)){console.log("\\n"+e.type);s.close()}})'`;
  return [
    '',
    `fastloop is running (model "${model}" is served by ${b.model ? 'llama.cpp' : 'a simulated accelerator'})`,
    '',
    `  HTTP        ${b.url}/v1`,
    `  WebSocket   ${b.wsUrl}`,
    `  gRPC        ${b.grpcAddress}   (fastloop.responses.v1 bidi stream)`,
    `  API key     ${b.apiKey}`,
    `  Redis       ${b.redisUrl}   (${b.redisSource})`,
    `  Logs        ${logDir}/<service>.log`,
    '',
    '  Services',
    services,
    '',
    'Try it:',
    '',
    '  # a response',
    `  curl -s ${b.url}/v1/responses ${auth} ${json} \\`,
    `    -d '{"model":"${model}","input":"hello"}'`,
    '',
    '  # the same, streamed as server-sent events',
    `  curl -sN ${b.url}/v1/responses ${auth} ${json} \\`,
    `    -d '{"model":"${model}","input":"hello","stream":true}'`,
    '',
    '  # the models',
    `  curl -s ${b.url}/v1/models ${auth}`,
    '',
    '  # WebSocket mode: connect, then send the frame below',
    `  npx wscat -c ${b.wsUrl} ${auth}`,
    `  > {"type":"response.create","model":"${model}","input":"hello"}`,
    '',
    '  # WebSocket mode from node (run in this repository, which has the ws package)',
    `  ${wsOneLiner}`,
    '',
    '  # any OpenAI SDK or agent CLI',
    `  export OPENAI_BASE_URL=${b.url}/v1 OPENAI_API_KEY=${b.apiKey}`,
    '',
    'Press Ctrl-C to stop.',
    '',
  ].join('\n');
}

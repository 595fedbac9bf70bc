import { createSocket, type RemoteInfo } from 'node:dgram';

/** A running {@link startFakeDnsServer}. */
export interface FakeDnsServer {
  /** `127.0.0.1:<port>`, for a resolver's servers (e.g. ROUTER_DNS_SERVERS). */
  readonly address: string;
  /** Sets the A records of `name` (an empty list answers NXDOMAIN, as a Service with no ready pods). */
  setRecords(name: string, ipv4s: readonly string[]): void;
  /** Queries answered so far. */
  readonly queries: number;
  close(): Promise<void>;
}

const TYPE_A = 1;
const CLASS_IN = 1;

/**
 * A DNS server on 127.0.0.1 (UDP, RFC 1035 wire format) that answers A queries from a table the test
 * sets: what a Kubernetes headless Service looks like to a client, one record per ready pod. Other
 * query types get an empty answer; unknown names NXDOMAIN. For tests only.
 */
export async function startFakeDnsServer(): Promise<FakeDnsServer> {
  const records = new Map<string, readonly string[]>();
  const socket = createSocket('udp4');
  let queries = 0;
  socket.on('message', (msg: Buffer, from: RemoteInfo) => {
    const answer = answerQuery(msg, records);
    if (!answer) return;
    queries++;
    socket.send(answer, from.port, from.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  const { port } = socket.address();
  return {
    address: `127.0.0.1:${port}`,
    setRecords: (name, ips) => records.set(name.toLowerCase().replace(/\.$/, ''), [...ips]),
    get queries() {
      return queries;
    },
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}

function answerQuery(msg: Buffer, records: ReadonlyMap<string, readonly string[]>): Buffer | undefined {
  if (msg.length < 12) return undefined;
  const id = msg.readUInt16BE(0);
  const questions = msg.readUInt16BE(4);
  if (questions !== 1) return undefined;
  // The question: labels, then type and class.
  const labels: string[] = [];
  let offset = 12;
  while (offset < msg.length && msg[offset] !== 0) {
    const len = msg[offset];
    labels.push(msg.subarray(offset + 1, offset + 1 + len).toString('ascii'));
    offset += 1 + len;
  }
  offset++;
  if (offset + 4 > msg.length) return undefined;
  const type = msg.readUInt16BE(offset);
  const question = msg.subarray(12, offset + 4);
  const name = labels.join('.').toLowerCase();
  const ips = records.get(name);
  const found = ips !== undefined && ips.length > 0;
  const answers = found && type === TYPE_A ? ips : [];
  const header = Buffer.alloc(12);
  header.writeUInt16BE(id, 0);
  // QR=1, opcode 0, AA=1, RD copied, RA=1; RCODE 3 (NXDOMAIN) for an unknown name.
  header.writeUInt16BE(0x8400 | (msg.readUInt16BE(2) & 0x0100) | 0x0080 | (found ? 0 : 3), 2);
  header.writeUInt16BE(1, 4);
  header.writeUInt16BE(answers.length, 6);
  const rrs = answers.map((ip) => {
    const rr = Buffer.alloc(16);
    rr.writeUInt16BE(0xc00c, 0); // pointer to the question's name
    rr.writeUInt16BE(TYPE_A, 2);
    rr.writeUInt16BE(CLASS_IN, 4);
    rr.writeUInt32BE(5, 6); // TTL: 5 s, as short as a headless Service's
    rr.writeUInt16BE(4, 10);
    ip.split('.').forEach((octet, i) => rr.writeUInt8(Number(octet), 12 + i));
    return rr;
  });
  return Buffer.concat([header, question, ...rrs]);
}

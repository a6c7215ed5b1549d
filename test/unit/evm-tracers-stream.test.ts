/**
 * Large results streamed to the socket (src/evm/tracers/raw-json.ts, src/rpc/jsonrpc/chunked-reply.ts,
 * the hook in geth-server.ts): a real GethRpcServer on loopback whose method returns a result
 * pulled through a MessageChannel, as a pool thread's trace is. A single HTTP request gets it with
 * chunked transfer encoding and the same JSON as the buffered path; a batch gets it whole; the
 * producer is never more than its credit ahead of the consumer; a client that goes away stops it.
 */
import { connect } from 'node:net';
import { MessageChannel } from 'node:worker_threads';
import t from 'tap';
import { chunkParts, portSource, RawJson, sendParts, toJsonParts } from '../../src/evm/tracers/raw-json.js';
import { GethRpcServer } from '../../src/rpc/jsonrpc/geth-server.js';
import { gethMethod } from '../../src/rpc/jsonrpc/geth.js';

/** ~10 MB of JSON: an array of 100,000 objects, as parts (the struct logger's shape). */
const parts: string[] = ['['];
for (let i = 0; i < 100_000; i++) parts.push(`${i > 0 ? ',' : ''}{"i":${i},"pad":"${'x'.repeat(80)}"}`);
parts.push(']');
const whole = parts.join('');

t.test('parts: toJsonParts keeps a RawJson whole in place; chunks concatenate to the text', async (t) => {
  const v = { a: 1, r: new RawJson(parts), z: [true, null] };
  t.equal(toJsonParts(v).join(''), `{"a":1,"r":${whole},"z":[true,null]}`);
  const chunks = [...chunkParts(parts, 64 * 1024)];
  t.ok(chunks.length > 100, `${chunks.length} chunks`);
  t.equal(chunks.join(''), whole);
});

t.test('across a MessagePort: every chunk in order, the producer at most 4 chunks ahead', async (t) => {
  const ch = new MessageChannel();
  let received = 0;
  ch.port1.on('message', () => received++);
  const done = sendParts(ch.port2, parts);
  const src = portSource(ch.port1);
  const got: string[] = [];
  let taken = 0;
  let worst = 0;
  const total = [...chunkParts(parts)].length + 1; // and the end mark
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  for (let c = await src.next(); c !== undefined; c = await src.next()) {
    taken++;
    got.push(c);
    // A slow consumer: the producer gets every chance to run ahead (up to its credit, then 10 ms more).
    const until = Date.now() + 5_000;
    while (received < Math.min(taken + 4, total) && Date.now() < until) await sleep(1);
    await sleep(10);
    worst = Math.max(worst, received - taken);
  }
  await done;
  t.equal(got.join(''), whole);
  t.ok(worst >= 1 && worst <= 4, `ahead of the consumer by at most the credit of 4 (${worst})`);
});

t.test('a consumer that cancels stops the producer', async (t) => {
  const ch = new MessageChannel();
  const done = sendParts(ch.port2, parts);
  const src = portSource(ch.port1);
  t.ok((await src.next())!.length > 0);
  src.cancel();
  await done; // resolves: the producer stopped
  t.pass('stopped');
});

let produced = 0;
let stopped: Promise<void> | undefined;
const server = new GethRpcServer({
  laddr: '127.0.0.1:0',
  methods: [
    gethMethod({
      name: 'test_big',
      handler: async (_args, ctx) => {
        const scope = ctx.stream;
        if (scope === undefined) return new RawJson(parts);
        const ch = new MessageChannel();
        ch.port2.on('message', (m) => m === 'more' && produced++);
        stopped = sendParts(ch.port2, parts);
        return scope.adopt(portSource(ch.port1));
      },
    }),
  ],
});
await server.start();
t.teardown(() => server.close());
const url = () => `http://127.0.0.1:${server.port}`;
const post = (body: unknown) => fetch(url(), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), signal: AbortSignal.timeout(120_000) });

t.test('HTTP: a single request is streamed, a batch answered whole, the same result', async (t) => {
  const single = await post({ jsonrpc: '2.0', id: 7, method: 'test_big', params: [] });
  t.equal(single.headers.get('transfer-encoding'), 'chunked');
  const text = await single.text();
  t.equal(text, `{"jsonrpc":"2.0","id":7,"result":${whole}}`, 'the envelope around the streamed result');
  const batch = await post([{ jsonrpc: '2.0', id: 8, method: 'test_big', params: [] }]);
  t.not(batch.headers.get('transfer-encoding'), 'chunked');
  t.equal(await batch.text(), `[{"jsonrpc":"2.0","id":8,"result":${whole}}]`);
});

t.test('HTTP: a client that goes away mid-answer stops the producer', async (t) => {
  produced = 0;
  stopped = undefined;
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'test_big', params: [] });
  const sock = connect(server.port, '127.0.0.1');
  await new Promise<void>((r) => sock.once('connect', () => r()));
  sock.write(`POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
  // The first bytes of the answer, then the client is gone.
  await new Promise<void>((r) => sock.once('data', () => r()));
  sock.destroy();
  const deadline = Date.now() + 60_000;
  while (stopped === undefined && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  await stopped;
  const total = [...chunkParts(parts)].length;
  t.ok(produced < total, `stopped after ${produced} of ${total} chunks asked`);
});

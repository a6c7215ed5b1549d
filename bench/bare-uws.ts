/**
 * The peer for bench/rpc.bench.ts: a bare uWebSockets.js handler that answers requests with
 * bytes it was given, with no routing, parsing or serialisation. Whatever chaind's RPC costs above
 * this is our overhead. Usage: node dist/bench/bare-uws.js <port> [POST ]<path>=<file> ...
 */
import fs from 'node:fs';
import { uws } from '../src/rpc/server/uws.js';

const port = Number(process.argv[2]);
const app = uws.App();
for (const spec of process.argv.slice(3)) {
  const [route, file] = spec.split('=') as [string, string];
  const body = fs.readFileSync(file);
  if (route.startsWith('POST ')) {
    // Read the request body (as any JSON-RPC server must), then answer.
    app.post(route.slice(5), (res) => {
      res.onAborted(() => {});
      res.onData((_chunk, last) => {
        if (last) res.cork(() => res.writeStatus('200 OK').writeHeader('Content-Type', 'application/json').end(body));
      });
    });
    continue;
  }
  app.get(route, (res) => {
    res.writeStatus('200 OK').writeHeader('Content-Type', 'application/json').end(body);
  });
}
app.listen('127.0.0.1', port, (s) => {
  if (!s) process.exit(1);
  process.stdout.write('ready\n');
});

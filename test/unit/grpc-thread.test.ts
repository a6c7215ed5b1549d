/**
 * The gRPC thread (src/rpc/grpc/thread.ts, workers/grpc.worker.ts): every test of
 * grpc-server.test.ts again, with the server's transport on its own thread and the calls run by
 * this thread's router (wire behaviour, statuses, heights, metadata, deadlines and cancels reaching
 * the handler's signal, reflection, graceful close). Then what is the thread's own: a port in use
 * fails start() with the server's message, and start() twice is refused.
 */
import net from 'node:net';
import t from 'tap';
import { QueryRouter } from '../../src/app/query-router.js';
import { GrpcThread } from '../../src/rpc/grpc/thread.js';

process.env.CHAIND_TEST_GRPC_VIA = 'thread';
await import('./grpc-server.test.js');

t.test('the thread: a port in use, start twice', async (t) => {
  const blocker = net.createServer();
  await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', () => r()));
  t.teardown(() => blocker.close());
  const port = (blocker.address() as net.AddressInfo).port;
  const busy = new GrpcThread({ address: `127.0.0.1:${port}`, router: new QueryRouter() });
  await t.rejects(busy.start(), /gRPC server: cannot listen on 127\.0\.0\.1:\d+/);
  await busy.close();
  const ok = new GrpcThread({ address: '127.0.0.1:0', router: new QueryRouter() });
  await ok.start();
  t.ok(ok.port > 0, 'listening on a free port');
  await t.rejects(ok.start(), /already started/);
  await ok.close();
  await ok.close(); // twice is fine
});

/**
 * The gRPC thread (src/rpc/grpc/thread.ts): the whole gRPC transport (HTTP/2 connections,
 * framing, deadlines, limits, reflection) of src/rpc/grpc/server.ts, off the thread that answers
 * node RPC. Its QueryRouter only names the routes: the main thread's services, rebuilt from their
 * file descriptors; every call's bytes go to the main thread, whose router runs it.
 *
 * Errors: a failure to listen is answered `fatal` with the server's message; a call the main
 * thread does not answer before close ends Unavailable.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { create, createFileRegistry, fromBinary } from '@bufbuild/protobuf';
import { FileDescriptorProtoSchema, FileDescriptorSetSchema } from '@bufbuild/protobuf/wkt';
import { QueryRouter } from '../src/app/query-router.js';
import { createNames } from '../src/names/index.js';
import { GrpcServer, type InvokeResult, type Invoker } from '../src/rpc/grpc/server.js';
import { UNAVAILABLE, type FromGrpcThread, type GrpcWorkerData, type ToGrpcThread } from '../src/rpc/grpc/thread.js';
import { toStatus } from '../src/rpc/grpc/status.js';
import { threadLogger } from './thread-logger.js';

const port = parentPort!;
const data = workerData as GrpcWorkerData;
const send = (m: FromGrpcThread) => port.postMessage(m);
const log = threadLogger(send, { grpc: data.logLevel }, 'grpc');

const registry = createFileRegistry(create(FileDescriptorSetSchema, { file: data.files.map((b) => fromBinary(FileDescriptorProtoSchema, b)) }));
const router = new QueryRouter({ names: createNames({ upstreamNames: data.upstreamNames }) });
for (const name of data.services) {
  const svc = registry.getService(name);
  if (svc === undefined) throw new Error(`gRPC thread: service ${name} is not in the files it was given`);
  router.registerService(svc, {});
}

const waiting = new Map<number, (r: InvokeResult) => void>();
let nextId = 1;
let closing = false;

/** Hands a call to the main thread: the request bytes (copied out of the socket's buffers), the height header, the metadata. */
const invoke: Invoker = (route, body, height, options) =>
  new Promise<InvokeResult>((resolve) => {
    if (closing) return resolve({ ok: false, status: UNAVAILABLE, height: undefined });
    const id = nextId++;
    waiting.set(id, resolve);
    // Client cancel or deadline: the main thread's handler sees its signal abort, as it would here.
    options.signal?.addEventListener('abort', () => {
      if (!waiting.has(id)) return;
      const st = toStatus(options.signal!.reason);
      send({ type: 'cancel', id, status: { code: st.code, message: st.message } });
    }, { once: true });
    const copy = Uint8Array.from(body);
    port.postMessage({ type: 'call', id, path: route.path, body: copy, height, metadata: options.metadata } satisfies FromGrpcThread, [copy.buffer]);
  });

const server = new GrpcServer({ ...data.limits, router, invoke, logger: log });

port.on('message', (m: ToGrpcThread) => {
  if (m.type === 'result') {
    const done = waiting.get(m.id);
    if (done === undefined) return;
    waiting.delete(m.id);
    const height = m.height === undefined ? undefined : BigInt(m.height);
    done(m.ok ? { ok: true, bytes: m.bytes, height } : { ok: false, status: m.status, height });
    return;
  }
  if (m.type === 'close') {
    void server.close().then(() => {
      closing = true;
      for (const done of waiting.values()) done({ ok: false, status: UNAVAILABLE, height: undefined });
      waiting.clear();
      send({ type: 'closed' });
      port.close();
    });
  }
});

server.start().then(
  () => send({ type: 'ready', host: server.host, port: server.port }),
  (e: Error) => send({ type: 'fatal', message: e.message }),
);

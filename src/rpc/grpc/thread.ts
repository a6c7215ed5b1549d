/**
 * The gRPC server on a thread of its own (workers/grpc.worker.ts). Measured when node:http2 was
 * the transport (./h2.ts replaced it): it cost ~0.5 ms of CPU per unary call on this 2-core
 * machine before any handler ran (a bare node:http2 server
 * answering one message and trailers at 500 calls/s: ~505 µs a call, 364 µs of it user time), and
 * on the thread that answers node RPC and runs consensus that work delays everything else: with a
 * gRPC Balance probe at 500/s beside a `/status` probe, the main thread was ~40 % busy on an idle
 * node, against ~7 % with the `/status` probe alone (bench/exec-latency.bench.ts, BENCH_PROBES).
 *
 * The thread owns the transport: sessions, streams, framing, deadlines, limits, reflection. Each
 * call's request bytes, x-cosmos-block-height and metadata come here, where the one QueryRouter
 * runs it as it always did (localInvoker: decode, height rules, handler, encode) over this
 * thread's app, mempool and stores; the response bytes or the status go back. A client cancel or
 * deadline on the thread aborts the handler's signal here. The thread knows the routes from the
 * router's file descriptors and service names, sent once at start: services must be registered
 * before start() (node.ts registers them all first).
 *
 * Measured on 2 cores (2026-11-27, gRPC Balance at 500/s): the main thread's CPU a call fell from
 * ~630 to ~300 µs, but the node's CPU a call rose from ~810 to ~1,020 µs (two messages and two
 * event-loop wake-ups a call), and with the executor, the bench client and both threads sharing
 * two cores the p99 latencies did not improve (three alternating pairs during a 5,000-tx block:
 * `/status` 11.7/30.4/13.5 ms on the thread, 15.3/8.5/21.2 inline; gRPC 26.0/34.0/16.2
 * against 21.7/12.0/26.9). So the node takes the thread only where cores are to spare (CHAIND_GRPC=auto:
 * GRPC_THREAD_MIN_CORES or more); `thread` and `inline` force either.
 */
import { Worker } from 'node:worker_threads';
import { toBinary } from '@bufbuild/protobuf';
import { FileDescriptorProtoSchema } from '@bufbuild/protobuf/wkt';
import type { Metadata, QueryRouter } from '../../app/query-router.js';
import type { Logger, LogLevel } from '../../log.js';
import { GrpcCode, statusError, type Status } from './status.js';
import { LazySignal, localInvoker, type GrpcServerOptions, type InvokeResult } from './server.js';

/** CHAIND_GRPC=auto runs the gRPC thread on machines of this many cores or more (see above). */
export const GRPC_THREAD_MIN_CORES = 4;

export const GRPC_WORKER_URL = new URL('../../../workers/grpc.worker.js', import.meta.url);

/** GrpcServerOptions as the thread takes them: everything but the router, the invoker and the logger. */
export type GrpcThreadLimits = Omit<GrpcServerOptions, 'router' | 'invoke' | 'logger'>;

export interface GrpcWorkerData {
  limits: GrpcThreadLimits;
  /** The router's files (FileDescriptorProto bytes), each after its imports. */
  files: Uint8Array[];
  /** The registered services' full names, in registration order. */
  services: string[];
  upstreamNames: boolean;
  logLevel: LogLevel;
}

/** Main → thread. */
export type ToGrpcThread = { type: 'result'; id: number; ok: true; bytes: Uint8Array; height?: string } | { type: 'result'; id: number; ok: false; status: Status; height?: string } | { type: 'close' };

/** Thread → main. */
export type FromGrpcThread =
  | { type: 'ready'; host: string; port: number }
  | { type: 'fatal'; message: string }
  | { type: 'call'; id: number; path: string; body: Uint8Array; height: string; metadata: Metadata }
  /** The call ended on the thread first (client cancel, deadline): its handler's signal aborts. */
  | { type: 'cancel'; id: number; status: Status }
  | { type: 'log'; level: Exclude<LogLevel, 'none'>; module: string; msg: string; fields?: Record<string, unknown> }
  | { type: 'closed' };

export interface GrpcThreadOptions extends GrpcThreadLimits {
  /** Its services, all registered before start(); its names spell them in reflection. */
  router: QueryRouter;
  logger?: Logger;
}

export class GrpcThread {
  private worker: Worker | null = null;
  private bound: { host: string; port: number } | null = null;
  private closing: Promise<void> | null = null;
  private onClosed: (() => void) | null = null;
  private dead = false;
  /** The handlers' signals of the calls in flight (made only when a handler asks for one). */
  private readonly signals = new Map<number, LazySignal>();

  constructor(private readonly opts: GrpcThreadOptions) {}

  get host(): string {
    return this.bound?.host ?? '';
  }

  get port(): number {
    return this.bound?.port ?? 0;
  }

  /** Starts the thread; resolves once it listens, rejects with the server's error when it cannot. */
  async start(): Promise<void> {
    if (this.worker) throw new Error('gRPC server: already started');
    const { router, logger, ...limits } = this.opts;
    const data: GrpcWorkerData = {
      limits,
      files: router.files().map((f) => toBinary(FileDescriptorProtoSchema, f.proto)),
      services: router.serviceDescs().map((s) => s.typeName),
      upstreamNames: router.names.upstreamNames,
      logLevel: logger?.level ?? 'none',
    };
    const invoke = localInvoker(router, logger);
    const version = router.version;
    const w = new Worker(GRPC_WORKER_URL, { workerData: data, name: 'chaind-grpc' });
    this.worker = w;
    const started = new Promise<void>((resolve, reject) => {
      w.on('message', (m: FromGrpcThread) => {
        switch (m.type) {
          case 'call':
            if (router.version !== version) logger?.error('gRPC: a service was registered after the gRPC thread started; it is not served', { path: m.path });
            void this.call(invoke, m);
            return;
          case 'cancel':
            this.signals.get(m.id)?.abort(statusError(m.status.code, m.status.message));
            return;
          case 'log':
            logger?.[m.level](m.msg, m.fields);
            return;
          case 'ready':
            this.bound = { host: m.host, port: m.port };
            resolve();
            return;
          case 'fatal':
            reject(new Error(m.message));
            return;
          case 'closed':
            this.onClosed?.();
        }
      });
      w.on('error', (e) => {
        reject(e);
        this.died(e);
      });
      w.on('exit', (code) => {
        reject(new Error(`gRPC thread exited with code ${code}`));
        this.died(new Error(`exited with code ${code}`));
      });
    });
    try {
      await started;
    } catch (e) {
      await w.terminate();
      this.worker = null;
      throw e;
    }
  }

  private async call(invoke: ReturnType<typeof localInvoker>, m: Extract<FromGrpcThread, { type: 'call' }>): Promise<void> {
    const resolved = this.opts.router.resolve(m.path);
    let r: InvokeResult;
    if ('error' in resolved) r = { ok: false, status: resolved.error, height: undefined };
    else {
      // The handler's signal, made if it asks: aborted by `cancel`.
      const sig = new LazySignal();
      this.signals.set(m.id, sig);
      const options = {
        metadata: m.metadata,
        get signal(): AbortSignal {
          return sig.signal;
        },
      };
      try {
        r = await invoke(resolved.route, m.body, m.height, options);
      } finally {
        this.signals.delete(m.id);
      }
    }
    const w = this.worker;
    if (w === null || this.dead) return;
    const height = r.height === undefined ? undefined : r.height.toString();
    if (r.ok) {
      // A buffer that owns its whole ArrayBuffer moves; any other (a pooled slice) is copied.
      const whole = r.bytes.byteOffset === 0 && r.bytes.byteLength === r.bytes.buffer.byteLength;
      w.postMessage({ type: 'result', id: m.id, ok: true, bytes: r.bytes, ...(height === undefined ? {} : { height }) } satisfies ToGrpcThread, whole ? [r.bytes.buffer as ArrayBuffer] : []);
    } else {
      w.postMessage({ type: 'result', id: m.id, ok: false, status: { code: r.status.code, message: r.status.message }, ...(height === undefined ? {} : { height }) } satisfies ToGrpcThread);
    }
  }

  private died(e: Error): void {
    if (this.dead) return;
    this.dead = true;
    if (this.closing === null && this.bound !== null) this.opts.logger?.error('gRPC thread died', { err: e.message });
    this.onClosed?.();
  }

  /** GracefulStop on the thread (its close grace), then the thread ends. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      const w = this.worker;
      if (w === null) return;
      if (!this.dead) {
        const closed = new Promise<void>((resolve) => (this.onClosed = resolve));
        w.postMessage({ type: 'close' } satisfies ToGrpcThread);
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([closed, new Promise<void>((resolve) => (timer = setTimeout(resolve, (this.opts.closeGraceMs ?? 5000) + 5000)))]);
        clearTimeout(timer);
      }
      await w.terminate();
      this.worker = null;
    })();
    return this.closing;
  }
}

/** The status of a call the thread could not hand over (the main thread is gone or closing). */
export const UNAVAILABLE: Status = { code: GrpcCode.Unavailable, message: 'transport is closing' };

/**
 * The node's threads through node:inspector: one in-process Session on the main thread, and, via
 * the inspector's NodeWorker domain (the one Chrome DevTools uses for workers), a session into
 * every worker thread the main thread started (the Piscina pool's threads, src/pool/piscina.ts).
 * Messages to a worker are dispatched on the worker's own thread by V8 interrupts, so a worker busy
 * in a long synchronous job still answers. No worker code is involved.
 */
import { Session } from 'node:inspector';

export interface WorkerInfo {
  /** NodeWorker session id. */
  sessionId: string;
  /** The worker's threadId, as text. */
  workerId: string;
  /** e.g. `[worker 3] default`. */
  title: string;
}

type Pending = { resolve: (v: any) => void; reject: (e: Error) => void; timer: NodeJS.Timeout };

export class InspectorError extends Error {
  readonly code = 'PROFILING_INSPECTOR';
}

export class ThreadInspector {
  private readonly session = new Session();
  readonly workers = new Map<string, WorkerInfo>();
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private readonly listeners = new Map<string, ((sessionId: string, params: any) => void)[]>();
  private attachListeners: ((w: WorkerInfo) => void)[] = [];
  private closed = false;

  private constructor() {}

  /** Connects to the main thread and attaches to every running worker. */
  static async open(): Promise<ThreadInspector> {
    const t = new ThreadInspector();
    t.session.connect();
    t.session.on('NodeWorker.attachedToWorker', (m: any) => {
      const info: WorkerInfo = { sessionId: m.params.sessionId, workerId: String(m.params.workerInfo.workerId), title: String(m.params.workerInfo.title) };
      t.workers.set(info.sessionId, info);
      for (const l of t.attachListeners) l(info);
    });
    t.session.on('NodeWorker.detachedFromWorker', (m: any) => {
      t.workers.delete(m.params.sessionId);
    });
    t.session.on('NodeWorker.receivedMessageFromWorker', (m: any) => t.fromWorker(m.params.sessionId, m.params.message));
    await t.main('NodeWorker.enable', { waitForDebuggerOnStart: false });
    return t;
  }

  /** A call on the main thread's inspector. */
  main<R = any>(method: string, params: object = {}): Promise<R> {
    return new Promise((resolve, reject) => {
      this.session.post(method, params, (err, res) => (err ? reject(new InspectorError(`${method}: ${err.message}`)) : resolve(res as R)));
    });
  }

  /** Main-thread inspector events (e.g. HeapProfiler.addHeapSnapshotChunk). */
  onMain(event: string, fn: (params: any) => void): () => void {
    const h = (m: any) => fn(m.params);
    this.session.on(event, h);
    return () => this.session.off(event, h);
  }

  /** A call on one worker's inspector; rejects after `timeoutMs` (the worker may have exited). */
  worker<R = any>(sessionId: string, method: string, params: object = {}, timeoutMs = 60_000): Promise<R> {
    const id = this.nextId++;
    return new Promise<R>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new InspectorError(`${method} on ${this.workers.get(sessionId)?.title ?? `worker session ${sessionId}`}: no answer in ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(id, { resolve, reject, timer });
      this.session.post('NodeWorker.sendMessageToWorker', { sessionId, message: JSON.stringify({ id, method, params }) }, (err) => {
        if (err) {
          clearTimeout(timer);
          this.pending.delete(id);
          reject(new InspectorError(`${method}: ${err.message}`));
        }
      });
    });
  }

  /** Sends without waiting for the answer. */
  send(sessionId: string, method: string, params: object = {}): void {
    this.session.post('NodeWorker.sendMessageToWorker', { sessionId, message: JSON.stringify({ id: this.nextId++, method, params }) }, () => {});
  }

  /** Worker inspector events (e.g. Debugger.paused), with the worker's session id. */
  onWorker(event: string, fn: (sessionId: string, params: any) => void): () => void {
    const list = this.listeners.get(event) ?? [];
    list.push(fn);
    this.listeners.set(event, list);
    return () => this.listeners.set(event, (this.listeners.get(event) ?? []).filter((f) => f !== fn));
  }

  /** Called for each worker attached later (a pool thread started after open()). */
  onAttach(fn: (w: WorkerInfo) => void): void {
    this.attachListeners.push(fn);
  }

  private fromWorker(sessionId: string, text: string): void {
    let m: any;
    try {
      m = JSON.parse(text);
    } catch {
      return;
    }
    if (typeof m.id === 'number') {
      const p = this.pending.get(m.id);
      if (p === undefined) return;
      this.pending.delete(m.id);
      clearTimeout(p.timer);
      if (m.error) p.reject(new InspectorError(`worker inspector: ${m.error.message ?? JSON.stringify(m.error)}`));
      else p.resolve(m.result);
      return;
    }
    for (const l of this.listeners.get(m.method) ?? []) l(sessionId, m.params);
  }

  /** Detaches from the workers and disconnects. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const p of this.pending.values()) {
      clearTimeout(p.timer);
      p.reject(new InspectorError('inspector session closed'));
    }
    this.pending.clear();
    try {
      await this.main('NodeWorker.disable');
    } catch {
      // already gone
    }
    this.session.disconnect();
  }
}

/**
 * createCryptoPool: the one place that picks the pool implementation from options, so the node's
 * composition root and the tests construct pools the same way.
 */
import { PiscinaCryptoPool } from './piscina.js';
import { SingleThreadCryptoPool } from './single.js';
import type { CryptoPool, CryptoPoolModules, CryptoPoolOptions } from './types.js';

export function createCryptoPool(opts: CryptoPoolOptions, modules: CryptoPoolModules = {}): CryptoPool {
  switch (opts.kind) {
    case 'piscina':
      return new PiscinaCryptoPool(opts, modules);
    case 'single':
      return new SingleThreadCryptoPool(opts, modules);
    default:
      throw new TypeError(`crypto pool kind must be piscina or single, got "${String((opts as { kind?: unknown }).kind)}"`);
  }
}

export * from './types.js';
export * from './constants.js';
export { ResultCode } from './job.js';
export { PiscinaCryptoPool, defaultThreadCount } from './piscina.js';
export { SingleThreadCryptoPool } from './single.js';

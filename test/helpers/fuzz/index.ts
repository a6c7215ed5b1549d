export * from './known-bugs.js';
export * from './mutators.js';
export * from './node.js';
export * from './prng.js';
export * from './surface.js';
export * from './surfaces.js';
export * from './target.js';

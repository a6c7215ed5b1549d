export * from './keys.js';
export * from './receipts.js';
export * from './state.js';
export * from './keeper.js';
export * from './kind.js';
export * from './module.js';
export * from './header.js';

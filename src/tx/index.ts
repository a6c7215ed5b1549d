/** Tx codec, sign bytes, amino JSON and account keys of the chain modules. */
export * from './codec.js';
export * from './signbytes.js';
export * from './amino.js';
export * from './pubkey.js';

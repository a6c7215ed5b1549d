/** The protobuf layer of the chain modules: registry, Any packing, SDK protobuf JSON, REST bindings. */
export * from './registry.js';
export * from './json.js';
export * from './http.js';

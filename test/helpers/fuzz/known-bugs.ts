/**
 * Mutators that reach bugs other branches are fixing. They are off in the default run so the suite
 * stays green; once the fix is merged, switching one on is a one-line change here (`true`), or, for
 * a single run, `FUZZ_KNOWN_BUGS=name,name` (or `all`) in the environment of the test or bench.
 *
 * Each entry names the bug it reaches. The matching strict expectation (e.g. "a 400 answer, not a
 * silent close or a hang") lives with the mutator, so an enabled mutator fails until the bug is
 * fixed.
 */
export const KNOWN_BUGS = {
  /** REST: `Content-Length: -1` kills the node (uws.ts readBody); node RPC closes without an answer. Fixed by harden-http. */
  negativeContentLength: false,
  /** JSON nested deeper than ~5000 levels (recursive parse/decoders overflow the stack). Fixed by the JSON-depth branch. */
  jsonDeepNesting: false,
  /** Content-Length that is not a decimal number (`abc`, `1e3`, ` 5`, two of them): closed without a 400. harden-http. */
  badContentLength: false,
  /** `Transfer-Encoding: chunked` request bodies: closed without an answer. harden-http. */
  chunkedBody: false,
  /** HTTP/1.0 request lines, LF-only line ends, absolute-form targets: uWS holds the connection, never answers. harden-http. */
  requestLineFraming: false,
  /** Header names with RFC 9110 token punctuation (`x-a|b`, `x-a%b`, `x-a'b`, …): uWS holds the connection without an answer. harden-http. */
  headerNameChars: false,
  /** A request method uWS does not know (`FUZZ /health`): closed without an answer (Go routes any token method). harden-http. */
  unknownMethod: false,
  /**
   * A request after a HEAD on the same keep-alive connection (pipelined or later): the server
   * closes the connection without answering it (and, pipelined, without answering the HEAD).
   * Node RPC and REST alike (src/rpc/server/uws.ts send → endWithoutBody). harden-http.
   */
  headKeepAlive: false,
  /**
   * A request head (request line + headers) past ~128 KiB, alone or as several pipelined
   * requests: uWS resets the connection (ECONNRESET), where Go answers up to max_header_bytes
   * (1 MiB) + 4096 and 431 beyond. Node RPC and REST. harden-http.
   */
  largeHead: false,
  /** Many requests written back to back without reading (pipelined floods, back-pressure). harden-http / node / rest. */
  pipelineFlood: false,
  /** gRPC: many streams per connection at once, and `grpc-timeout` beyond the clamp. harden-grpc. */
  grpcStreamFlood: false,
} satisfies Record<string, boolean>;

export type KnownBug = keyof typeof KNOWN_BUGS;

/** Whether a known-bug mutator runs: switched on above, or listed in FUZZ_KNOWN_BUGS. */
export function knownBugEnabled(name: KnownBug): boolean {
  if (KNOWN_BUGS[name]) return true;
  const raw = process.env.FUZZ_KNOWN_BUGS ?? '';
  if (raw !== envRaw) {
    envRaw = raw;
    envSet = new Set(raw.split(',').map((s) => s.trim()));
  }
  return envSet.has('all') || envSet.has(name);
}

let envRaw = '';
let envSet = new Set<string>();

/**
 * The brand-name registry: every wire name that carries a brand word lives here.
 *
 * The spec (the spec, first paragraph) replaces brand words with neutral ones: `chain` in
 * protobuf packages, type URLs, REST paths and amino names (`chain.auth.v1beta1`,
 * `/chain/auth/v1beta1/...`, `chain-sdk/MsgGrant`), `consensus` in key and event types
 * (`consensus/PubKeyEd25519`, `consensus/event/NewBlock`) and `node` in the event-query key
 * (`node.event`). Unmodified CosmJS, Keplr and explorers speak the upstream names (`cosmos.*`,
 * `tendermint/…`, `tm.event`; cometbft/cometbft:crypto/ed25519/ed25519.go), so:
 *
 * - names are **emitted** in the spec spelling by default, or in the upstream spelling when
 *   app.toml `[compat] upstream-names = true` (`createNames({ upstreamNames: true })`);
 * - both spellings are always **accepted** on input; parse functions return the canonical (spec)
 *   form, which is the only form used inside the node.
 *
 * No other module should spell `tendermint`, `cosmos`, `tm.event` or their neutral forms on the wire.
 */

/** Key algorithms that have registered JSON names (cometbft: crypto/ed25519, secp256k1, sr25519). */
export type KeyAlgo = 'ed25519' | 'secp256k1' | 'sr25519';

/** The consensus events CometBFT 0.38 publishes (cometbft/cometbft:types/events.go), in that file's order. */
export const CONSENSUS_EVENT_TYPES = [
  'CompleteProposal',
  'Lock',
  'NewRound',
  'NewRoundStep',
  'Polka',
  'Relock',
  'TimeoutPropose',
  'TimeoutWait',
  'Unlock',
  'ValidBlock',
  'Vote',
] as const;
export type ConsensusEventTypeValue = (typeof CONSENSUS_EVENT_TYPES)[number];

/** Event type values (the value of `node.event`, cometbft: types/events.go). */
export const EVENT_TYPES = [
  'NewBlock',
  'NewBlockHeader',
  'NewBlockEvents',
  'NewEvidence',
  'Tx',
  'ValidatorSetUpdates',
  ...CONSENSUS_EVENT_TYPES,
] as const;
export type EventTypeValue = (typeof EVENT_TYPES)[number];

/**
 * Registered names of event *data* (the `type` of `{"type":…,"value":…}` in a subscription push).
 * They differ from event types: NewRoundStep, Polka, Lock, … all carry `RoundState` data
 * (cometbft/cometbft:types/events.go).
 */
export const EVENT_DATA_TYPES = [
  'NewBlock',
  'NewBlockHeader',
  'NewBlockEvents',
  'NewEvidence',
  'Tx',
  'ValidatorSetUpdates',
  'NewRound',
  'CompleteProposal',
  'RoundState',
  'Vote',
] as const;
export type EventDataTypeName = (typeof EVENT_DATA_TYPES)[number];

export const EVIDENCE_TYPES = ['DuplicateVoteEvidence', 'LightClientAttackEvidence'] as const;
export type EvidenceTypeName = (typeof EVIDENCE_TYPES)[number];

/** Bech32 human-readable part of account addresses (`chain1…`). Not switched by upstream-names:
 * an address is data, and CosmJS/Keplr take the prefix from the chain registry entry. */
export const BECH32_PREFIX = 'chain';
/** Bech32 prefixes for validator operator and consensus addresses (SDK convention: +valoper, +valcons). */
export const BECH32_PREFIX_VALOPER = 'chainvaloper';
export const BECH32_PREFIX_VALCONS = 'chainvalcons';

/** One spelling of every brand-carrying name part. */
interface Spelling {
  /** Key type prefix: `consensus/PubKeyEd25519`. */
  key: string;
  /** Event data type prefix: `consensus/event/NewBlock`. */
  event: string;
  /** The reserved event-query key. */
  eventKey: string;
  /** Protobuf package root: `chain.auth.v1beta1`. */
  proto: string;
  /** REST path root: `/chain/auth/v1beta1/...`. */
  rest: string;
  /** Amino name prefixes, most specific first: `chain-sdk/MsgGrant`, `chain/…`. */
  amino: readonly string[];
  /** Proto package of the ABCI `PublicKey` oneof, whose Go type name leaks into
   * block_results JSON: `{"Sum":{"type":"tendermint.crypto.PublicKey_Ed25519",…}}` (cometbft/cometbft:crypto/ed25519/ed25519.go). */
  abciCrypto: string;
}

/** Spec spelling: the canonical, internal form. */
const SPEC: Spelling = {
  key: 'consensus/',
  event: 'consensus/event/',
  eventKey: 'node.event',
  proto: 'chain',
  rest: '/chain',
  amino: ['chain-sdk/', 'consensus/', 'chain/'],
  // The spec renames key types to `consensus`; this Go type name is a key type, so it follows.
  abciCrypto: 'consensus.crypto.',
};

/** Upstream spelling (CometBFT 0.38, Cosmos SDK). */
const UPSTREAM: Spelling = {
  key: 'tendermint/',
  event: 'tendermint/event/',
  eventKey: 'tm.event',
  proto: 'cosmos',
  rest: '/cosmos',
  amino: ['cosmos-sdk/', 'tendermint/', 'cosmos/'],
  abciCrypto: 'tendermint.crypto.',
};

const KEY_SUFFIX: Record<KeyAlgo, string> = {
  ed25519: 'Ed25519',
  secp256k1: 'Secp256k1',
  sr25519: 'Sr25519',
};
const ALGO_BY_SUFFIX = new Map<string, KeyAlgo>(
  (Object.keys(KEY_SUFFIX) as KeyAlgo[]).map((a) => [KEY_SUFFIX[a], a]),
);

function stripEither(s: string, a: string, b: string): string | undefined {
  if (s.startsWith(a)) return s.slice(a.length);
  if (s.startsWith(b)) return s.slice(b.length);
  return undefined;
}

function parseKeyType(s: string, kind: 'PubKey' | 'PrivKey'): KeyAlgo | undefined {
  const rest = stripEither(s, SPEC.key, UPSTREAM.key);
  if (rest === undefined || !rest.startsWith(kind)) return undefined;
  return ALGO_BY_SUFFIX.get(rest.slice(kind.length));
}

/** `consensus/PubKeyEd25519` or `tendermint/PubKeyEd25519` → `ed25519`; anything else → undefined. */
export function parsePubKeyType(s: string): KeyAlgo | undefined {
  return parseKeyType(s, 'PubKey');
}

/** `consensus/PrivKeyEd25519` or `tendermint/PrivKeyEd25519` → `ed25519`. */
export function parsePrivKeyType(s: string): KeyAlgo | undefined {
  return parseKeyType(s, 'PrivKey');
}

/** `consensus/event/NewBlock` or `tendermint/event/NewBlock` → `NewBlock`; other strings → undefined. */
export function parseEventType(s: string): string | undefined {
  const rest = stripEither(s, SPEC.event, UPSTREAM.event);
  return rest === undefined || rest === '' ? undefined : rest;
}

/** `consensus/DuplicateVoteEvidence` or `tendermint/DuplicateVoteEvidence` → `DuplicateVoteEvidence`. */
export function parseEvidenceType(s: string): EvidenceTypeName | undefined {
  const rest = stripEither(s, SPEC.key, UPSTREAM.key);
  return (EVIDENCE_TYPES as readonly string[]).includes(rest ?? '') ? (rest as EvidenceTypeName) : undefined;
}

/** `consensus.crypto.PublicKey_Ed25519` or `tendermint.crypto.PublicKey_Ed25519` → `ed25519`. */
export function parseAbciPubKeySumType(s: string): KeyAlgo | undefined {
  const rest = stripEither(s, SPEC.abciCrypto, UPSTREAM.abciCrypto);
  if (rest === undefined || !rest.startsWith('PublicKey_')) return undefined;
  return ALGO_BY_SUFFIX.get(rest.slice('PublicKey_'.length));
}

/** True for the event-type query key in either spelling (`node.event`, `tm.event`). */
export function isEventKey(key: string): boolean {
  return key === SPEC.eventKey || key === UPSTREAM.eventKey;
}

/** Canonical form of the event-type query key: `tm.event` → `node.event`; other keys → undefined. */
export function parseEventKey(key: string): string | undefined {
  return isEventKey(key) ? SPEC.eventKey : undefined;
}

/** Canonical form of any event-query tag: `tm.event` → `node.event`; every other tag unchanged. */
export function normalizeQueryKey(key: string): string {
  return key === UPSTREAM.eventKey ? SPEC.eventKey : key;
}

/** Map a protobuf full name or type URL between spellings. Only the package root is a brand word:
 * `[/]<from>.x.y` → `[/]<to>.x.y`; names in other packages (`/google.protobuf.Any`) are unchanged. */
function mapProto(name: string, from: string, to: string): string {
  const slash = name.startsWith('/') ? '/' : '';
  const body = slash ? name.slice(1) : name;
  if (body === from) return slash + to;
  if (body.startsWith(from + '.')) return slash + to + body.slice(from.length);
  return name;
}

function mapRest(path: string, from: string, to: string): string {
  if (path === from) return to;
  const next = path.charAt(from.length);
  if (path.startsWith(from) && (next === '/' || next === '?')) return to + path.slice(from.length);
  return path;
}

function mapAmino(name: string, from: readonly string[], to: readonly string[]): string {
  for (let i = 0; i < from.length; i++) {
    if (name.startsWith(from[i]!)) return to[i]! + name.slice(from[i]!.length);
  }
  return name;
}

/** Canonical (spec) form of a type URL or protobuf full name: `/cosmos.auth.v1beta1.BaseAccount` →
 * `/chain.auth.v1beta1.BaseAccount`; also `cosmos.auth.v1beta1.Query/Account` (gRPC method). */
export function parseTypeUrl(url: string): string {
  return mapProto(url, UPSTREAM.proto, SPEC.proto);
}

/** Canonical form of a REST path: `/cosmos/auth/v1beta1/params` → `/chain/auth/v1beta1/params`. */
export function parseRestPath(path: string): string {
  return mapRest(path, UPSTREAM.rest, SPEC.rest);
}

/** Canonical form of an amino name: `cosmos-sdk/MsgGrant` → `chain-sdk/MsgGrant`,
 * `tendermint/PubKeySecp256k1` → `consensus/PubKeySecp256k1`. */
export function parseAminoName(name: string): string {
  return mapAmino(name, UPSTREAM.amino, SPEC.amino);
}

export interface NamesOptions {
  /** app.toml `[compat] upstream-names`: emit upstream names instead of the spec's. */
  upstreamNames?: boolean;
}

/** The registry, bound to one emit spelling. Parse functions accept both spellings in either mode. */
export interface Names {
  readonly upstreamNames: boolean;

  /** `consensus/PubKeyEd25519` (upstream `tendermint/PubKeyEd25519`). */
  pubKeyType(algo: KeyAlgo): string;
  /** `consensus/PrivKeyEd25519` (upstream `tendermint/PrivKeyEd25519`). */
  privKeyType(algo: KeyAlgo): string;
  /**
   * `consensus/event/<name>` (upstream `tendermint/event/<name>`). For the `type` of pushed event
   * data use the data names: CometBFT registers `RoundState` for NewRoundStep, Polka, Lock, Unlock,
   * Relock, ValidBlock, TimeoutPropose and TimeoutWait (cometbft: types/events.go).
   */
  eventType(name: EventDataTypeName | EventTypeValue): string;
  /** The event-type query key: `node.event` (upstream `tm.event`). */
  eventKey(): string;
  /** `consensus/DuplicateVoteEvidence` (upstream `tendermint/DuplicateVoteEvidence`). */
  evidenceType(name: EvidenceTypeName): string;
  /** `consensus.crypto.PublicKey_Ed25519` (upstream `tendermint.crypto.PublicKey_Ed25519`). */
  abciPubKeySumType(algo: KeyAlgo): string;
  /** Type URL or proto full name in the emit spelling; input may be either spelling. */
  typeUrl(url: string): string;
  /** REST path in the emit spelling; input may be either spelling. */
  restPath(path: string): string;
  /** Amino name in the emit spelling; input may be either spelling. */
  aminoName(name: string): string;

  parsePubKeyType(s: string): KeyAlgo | undefined;
  parsePrivKeyType(s: string): KeyAlgo | undefined;
  parseEventType(s: string): string | undefined;
  parseEvidenceType(s: string): EvidenceTypeName | undefined;
  parseAbciPubKeySumType(s: string): KeyAlgo | undefined;
  parseEventKey(key: string): string | undefined;
  isEventKey(key: string): boolean;
  normalizeQueryKey(key: string): string;
  parseTypeUrl(url: string): string;
  parseRestPath(path: string): string;
  parseAminoName(name: string): string;
}

/** Build the registry for one emit spelling. Cheap; callers keep one instance per node. */
export function createNames(opts: NamesOptions = {}): Names {
  const upstreamNames = opts.upstreamNames === true;
  const out = upstreamNames ? UPSTREAM : SPEC;
  const other = upstreamNames ? SPEC : UPSTREAM;
  // Precompute the fixed strings: these are emitted on every event and key, so no concatenation per call.
  const pub = new Map<KeyAlgo, string>();
  const priv = new Map<KeyAlgo, string>();
  const abci = new Map<KeyAlgo, string>();
  for (const algo of Object.keys(KEY_SUFFIX) as KeyAlgo[]) {
    pub.set(algo, `${out.key}PubKey${KEY_SUFFIX[algo]}`);
    priv.set(algo, `${out.key}PrivKey${KEY_SUFFIX[algo]}`);
    abci.set(algo, `${out.abciCrypto}PublicKey_${KEY_SUFFIX[algo]}`);
  }
  const events = new Map<string, string>([...EVENT_DATA_TYPES, ...EVENT_TYPES].map((e) => [e, out.event + e]));
  return Object.freeze({
    upstreamNames,
    pubKeyType: (algo: KeyAlgo) => pub.get(algo) ?? `${out.key}PubKey${algo}`,
    privKeyType: (algo: KeyAlgo) => priv.get(algo) ?? `${out.key}PrivKey${algo}`,
    eventType: (name: EventDataTypeName | EventTypeValue) => events.get(name) ?? out.event + name,
    eventKey: () => out.eventKey,
    evidenceType: (name: EvidenceTypeName) => out.key + name,
    abciPubKeySumType: (algo: KeyAlgo) => abci.get(algo) ?? `${out.abciCrypto}PublicKey_${algo}`,
    typeUrl: (url: string) => mapProto(url, other.proto, out.proto),
    restPath: (path: string) => mapRest(path, other.rest, out.rest),
    aminoName: (name: string) => mapAmino(name, other.amino, out.amino),
    parsePubKeyType,
    parsePrivKeyType,
    parseEventType,
    parseEvidenceType,
    parseAbciPubKeySumType,
    parseEventKey,
    isEventKey,
    normalizeQueryKey,
    parseTypeUrl,
    parseRestPath,
    parseAminoName,
  });
}

/** The default registry (spec names), for code that runs before app.toml is read (`chaind init`). */
export const SPEC_NAMES: Names = createNames({ upstreamNames: false });

/**
 * ABCI errors with a codespace and a code, as the Cosmos SDK registers them
 * (cosmos-sdk: types/errors/errors.go, cosmossdk.io/errors errors.go and abci.go;
 * cosmos/cosmos-sdk:types/errors/errors.go).
 *
 * A registered error is a (codespace, code, description) triple. Wrapping keeps the triple and
 * prefixes the message, so the text that lands in a tx result's `log` is Go's `wrap: root` order:
 * `spendable balance 0stake is smaller than 100stake: insufficient funds`.
 */

/** Codespace of the SDK's root errors. */
export const SDK_CODESPACE = 'sdk';
/** Codespace of errors nobody registered (cosmossdk.io/errors UndefinedCodespace). */
export const UNDEFINED_CODESPACE = 'undefined';

/** An error that carries an ABCI (codespace, code). `code` is the cross-module string code. */
export class AbciError extends Error {
  /** Stable string code, `<codespace>:<abciCode>`, e.g. `sdk:5`. */
  readonly code: string;
  readonly codespace: string;
  readonly abciCode: number;
  /** The registered description without wrap messages, e.g. `insufficient funds`. */
  readonly description: string;

  constructor(codespace: string, abciCode: number, description: string, message?: string) {
    super(message ?? description);
    this.name = 'AbciError';
    this.codespace = codespace;
    this.abciCode = abciCode;
    this.description = description;
    this.code = `${codespace}:${abciCode}`;
  }

  /** errorsmod.Wrap: `<msg>: <this message>`, same codespace and code. */
  wrap(msg: string): AbciError {
    return new AbciError(this.codespace, this.abciCode, this.description, `${msg}: ${this.message}`);
  }

  /** True when `err` is an AbciError with the same codespace and code (errors.Is on the root). */
  is(err: unknown): boolean {
    return err instanceof AbciError && err.codespace === this.codespace && err.abciCode === this.abciCode;
  }
}

/** A registered root error; `wrap` builds the instance to return or throw. */
export class RegisteredError extends AbciError {
  constructor(codespace: string, abciCode: number, description: string) {
    super(codespace, abciCode, description);
    this.name = 'RegisteredError';
  }
}

const registry = new Map<string, RegisteredError>();

/**
 * errorsmod.Register: a codespace/code pair may be registered once (the SDK panics on a duplicate,
 * so do we) and code 1 is reserved for "internal".
 */
export function registerError(codespace: string, abciCode: number, description: string): RegisteredError {
  const key = `${codespace}:${abciCode}`;
  if (registry.has(key)) throw new Error(`error with code ${abciCode} is already registered: "${registry.get(key)!.description}"`);
  const e = new RegisteredError(codespace, abciCode, description);
  registry.set(key, e);
  return e;
}

/** The registered root error for (codespace, code), if any. */
export function lookupError(codespace: string, abciCode: number): RegisteredError | undefined {
  return registry.get(`${codespace}:${abciCode}`);
}

/** Unregistered errors report (undefined, 1) (cosmossdk.io/errors abci.go internalABCICode). */
export const errInternal = new RegisteredError(UNDEFINED_CODESPACE, 1, 'internal');
/** Recovered panics report (undefined, 111222) (cosmossdk.io/errors errors.go ErrPanic). */
export const errPanic = new RegisteredError(UNDEFINED_CODESPACE, 111222, 'panic');
registry.set(errInternal.code, errInternal);
registry.set(errPanic.code, errPanic);

/** The SDK root errors, codespace `sdk` (cosmos-sdk: types/errors/errors.go). */
export const sdkErrors = {
  txDecode: registerError(SDK_CODESPACE, 2, 'tx parse error'),
  invalidSequence: registerError(SDK_CODESPACE, 3, 'invalid sequence'),
  unauthorized: registerError(SDK_CODESPACE, 4, 'unauthorized'),
  insufficientFunds: registerError(SDK_CODESPACE, 5, 'insufficient funds'),
  unknownRequest: registerError(SDK_CODESPACE, 6, 'unknown request'),
  invalidAddress: registerError(SDK_CODESPACE, 7, 'invalid address'),
  invalidPubKey: registerError(SDK_CODESPACE, 8, 'invalid pubkey'),
  unknownAddress: registerError(SDK_CODESPACE, 9, 'unknown address'),
  invalidCoins: registerError(SDK_CODESPACE, 10, 'invalid coins'),
  outOfGas: registerError(SDK_CODESPACE, 11, 'out of gas'),
  memoTooLarge: registerError(SDK_CODESPACE, 12, 'memo too large'),
  insufficientFee: registerError(SDK_CODESPACE, 13, 'insufficient fee'),
  tooManySignatures: registerError(SDK_CODESPACE, 14, 'maximum number of signatures exceeded'),
  noSignatures: registerError(SDK_CODESPACE, 15, 'no signatures supplied'),
  jsonMarshal: registerError(SDK_CODESPACE, 16, 'failed to marshal JSON bytes'),
  jsonUnmarshal: registerError(SDK_CODESPACE, 17, 'failed to unmarshal JSON bytes'),
  invalidRequest: registerError(SDK_CODESPACE, 18, 'invalid request'),
  txInMempoolCache: registerError(SDK_CODESPACE, 19, 'tx already in mempool'),
  mempoolIsFull: registerError(SDK_CODESPACE, 20, 'mempool is full'),
  txTooLarge: registerError(SDK_CODESPACE, 21, 'tx too large'),
  keyNotFound: registerError(SDK_CODESPACE, 22, 'key not found'),
  wrongPassword: registerError(SDK_CODESPACE, 23, 'invalid account password'),
  invalidSigner: registerError(SDK_CODESPACE, 24, 'tx intended signer does not match the given signer'),
  invalidGasAdjustment: registerError(SDK_CODESPACE, 25, 'invalid gas adjustment'),
  invalidHeight: registerError(SDK_CODESPACE, 26, 'invalid height'),
  invalidVersion: registerError(SDK_CODESPACE, 27, 'invalid version'),
  invalidChainId: registerError(SDK_CODESPACE, 28, 'invalid chain-id'),
  invalidType: registerError(SDK_CODESPACE, 29, 'invalid type'),
  txTimeoutHeight: registerError(SDK_CODESPACE, 30, 'tx timeout height'),
  unknownExtensionOptions: registerError(SDK_CODESPACE, 31, 'unknown extension options'),
  wrongSequence: registerError(SDK_CODESPACE, 32, 'incorrect account sequence'),
  packAny: registerError(SDK_CODESPACE, 33, 'failed packing protobuf message to Any'),
  unpackAny: registerError(SDK_CODESPACE, 34, 'failed unpacking protobuf message from Any'),
  logic: registerError(SDK_CODESPACE, 35, 'internal logic error'),
  conflict: registerError(SDK_CODESPACE, 36, 'conflict'),
  notSupported: registerError(SDK_CODESPACE, 37, 'feature not supported'),
  notFound: registerError(SDK_CODESPACE, 38, 'not found'),
  io: registerError(SDK_CODESPACE, 39, 'Internal IO error'),
  appConfig: registerError(SDK_CODESPACE, 40, 'error in app.toml'),
  invalidGasLimit: registerError(SDK_CODESPACE, 41, 'invalid gas limit'),
  txTimeout: registerError(SDK_CODESPACE, 42, 'tx timeout'),
} as const;

/** ABCI (codespace, code, log) of any thrown value (cosmossdk.io/errors abci.go ABCIInfo). */
export function abciInfo(err: unknown): { codespace: string; code: number; log: string } {
  if (err instanceof AbciError) return { codespace: err.codespace, code: err.abciCode, log: err.message };
  // An unregistered error is (undefined, 1). The SDK puts err.Error() in the log; so do we, since
  // the log is not part of LastResultsHash and helps whoever debugs the failing tx.
  const msg = err instanceof Error ? err.message : String(err);
  return { codespace: UNDEFINED_CODESPACE, code: errInternal.abciCode, log: msg };
}

/**
 * gRPC status codes (google.golang.org/grpc/codes) that query handlers may fail with; the REST
 * and gRPC servers map them to HTTP statuses, abci_query maps them to SDK errors.
 */
export enum GrpcCode {
  OK = 0,
  Canceled = 1,
  Unknown = 2,
  InvalidArgument = 3,
  DeadlineExceeded = 4,
  NotFound = 5,
  AlreadyExists = 6,
  PermissionDenied = 7,
  ResourceExhausted = 8,
  FailedPrecondition = 9,
  Aborted = 10,
  OutOfRange = 11,
  Unimplemented = 12,
  Internal = 13,
  Unavailable = 14,
  DataLoss = 15,
  Unauthenticated = 16,
}

/** status.Error(code, msg) from a query handler. */
export class GrpcStatusError extends Error {
  readonly code: string;
  readonly grpcCode: GrpcCode;
  /** The status message (`desc`), without the `rpc error: …` frame. */
  readonly desc: string;

  constructor(grpcCode: GrpcCode, desc: string) {
    super(`rpc error: code = ${GrpcCode[grpcCode]} desc = ${desc}`);
    this.name = 'GrpcStatusError';
    this.grpcCode = grpcCode;
    this.desc = desc;
    this.code = `grpc:${GrpcCode[grpcCode]}`;
  }
}

/**
 * gRPCErrorToSDKError (cosmos-sdk: baseapp/abci.go): how a query handler's gRPC
 * status becomes an ABCI query error. NotFound → 22, InvalidArgument/FailedPrecondition → 18,
 * Unauthenticated → 4, any other status → 6; the log is `<grpc err string>: <root description>`.
 */
export function grpcErrorToAbci(err: GrpcStatusError): AbciError {
  let root: RegisteredError;
  switch (err.grpcCode) {
    case GrpcCode.NotFound:
      root = sdkErrors.keyNotFound;
      break;
    case GrpcCode.InvalidArgument:
    case GrpcCode.FailedPrecondition:
      root = sdkErrors.invalidRequest;
      break;
    case GrpcCode.Unauthenticated:
      root = sdkErrors.unauthorized;
      break;
    default:
      root = sdkErrors.unknownRequest;
  }
  return root.wrap(err.message);
}

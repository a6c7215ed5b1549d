/** Errors from reading config.toml, app.toml, genesis.json, key files and flags. */

export type ConfigErrorCode =
  /** A file that must exist is missing (genesis.json, a key file). */
  | 'CONFIG_NOT_FOUND'
  /** A file is not valid TOML / JSON. */
  | 'CONFIG_SYNTAX'
  /** A value is present but invalid. */
  | 'CONFIG_INVALID'
  /** `chaind init` would overwrite an existing file. */
  | 'CONFIG_EXISTS';

/**
 * An invalid setting. The message always names where the value came from and which field:
 * `config/config.toml: [consensus] timeout_commit: invalid duration "abc"`,
 * `config/genesis.json: chain_id: must not be empty`, `flag --rpc.laddr: invalid listen address "x"`.
 * The CLI prints the message alone (no stack) and exits 1.
 */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(
    message: string,
    readonly code: ConfigErrorCode = 'CONFIG_INVALID',
    /** The file (relative to home where possible) or `flag --x`. */
    readonly source?: string,
    /** The field, e.g. `[rpc] laddr` or `validators[0].power`. */
    readonly field?: string,
  ) {
    super(message);
  }
}

/** `source: field: reason`, or `source: reason` without a field. */
export function configError(
  source: string,
  field: string | undefined,
  reason: string,
  code: ConfigErrorCode = 'CONFIG_INVALID',
): ConfigError {
  const msg = field ? `${source}: ${field}: ${reason}` : `${source}: ${reason}`;
  return new ConfigError(msg, code, source, field);
}

/**
 * Import first (before any module that hashes at load time, e.g. test/helpers/evm.ts's
 * TRANSFER_TOPIC): applies CHAIND_CRYPTO to the process-wide crypto backend, so a bench child
 * started with CHAIND_CRYPTO=js or =native gets that backend instead of CRYPTO_ALREADY_CHOSEN.
 */
import { readEnvSwitches } from '../src/config/env.js';
import { setCryptoBackendSetting } from '../src/crypto/backend.js';

setCryptoBackendSetting(readEnvSwitches(process.env).crypto);

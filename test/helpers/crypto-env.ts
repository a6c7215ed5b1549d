/**
 * Preloaded into every test process tap starts (package.json "tap"."node-arg": --import of the
 * compiled file), and imported first by the helper scripts tests run as processes of their own:
 * applies CHAIND_CRYPTO to the process-wide crypto backend as the CLI does (src/config/env.ts
 * readEnvSwitches), so `CHAIND_CRYPTO=js tap …` runs the in-process code, the in-process nodes and
 * their worker threads (which take the main thread's setting) on the JavaScript backend. Unset or
 * `auto`: native where the addon loads, as before. test/unit/crypto-backend.test.ts checks that the
 * setting reached this process, the pool's threads, the executor thread and a node child.
 *
 * A bad value fails the file at start with the ConfigError naming CHAIND_CRYPTO.
 */
import { readEnvSwitches } from '../../src/config/env.js';
import { setCryptoBackendSetting } from '../../src/crypto/backend.js';

setCryptoBackendSetting(readEnvSwitches(process.env).crypto);

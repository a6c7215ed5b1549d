#!/usr/bin/env node
// Writes docs/EVM-METHODS.md from the compiled method table (run `make compile` first).
import { writeFileSync } from 'node:fs';
import { renderEvmMethodTable } from '../dist/src/rpc/evm/method-table.js';

writeFileSync(new URL('../docs/EVM-METHODS.md', import.meta.url), renderEvmMethodTable());
console.log('wrote docs/EVM-METHODS.md');

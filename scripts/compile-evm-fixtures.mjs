#!/usr/bin/env node
// Compiles the EVM test fixture test/fixtures/evm/Probe.sol with solc-js (the `solc`
// devDependency) and writes test/fixtures/evm/Probe.json: ABI, creation and runtime bytecode of
// each contract. The output is checked in, so tests never compile. Settings: optimizer on,
// 200 runs, evmVersion prague (test/fixtures/evm/README.md). Run: node scripts/compile-evm-fixtures.mjs
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const solc = require('solc');
const dir = join(dirname(fileURLToPath(import.meta.url)), '../test/fixtures/evm');
const source = 'Probe.sol';
const settings = {
  optimizer: { enabled: true, runs: 200 },
  evmVersion: 'prague',
  outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object', 'evm.deployedBytecode.object'] } },
};
const input = { language: 'Solidity', sources: { [source]: { content: readFileSync(join(dir, source), 'utf8') } }, settings };
const out = JSON.parse(solc.compile(JSON.stringify(input)));
const errors = (out.errors ?? []).filter((e) => e.severity === 'error');
for (const e of out.errors ?? []) console.error(e.formattedMessage);
if (errors.length > 0) process.exit(1);
const contracts = {};
for (const [name, c] of Object.entries(out.contracts[source])) {
  contracts[name] = { abi: c.abi, bytecode: `0x${c.evm.bytecode.object}`, deployedBytecode: `0x${c.evm.deployedBytecode.object}` };
}
writeFileSync(join(dir, 'Probe.json'), `${JSON.stringify({ compiler: `solc ${solc.version()}`, settings, contracts }, null, 2)}\n`);
console.log(`wrote Probe.json: ${Object.keys(contracts).join(', ')} (solc ${solc.version()})`);

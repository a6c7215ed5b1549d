/**
 * docs/EVM-METHODS.md is what the code serves: the committed file equals the table rendered from
 * src/rpc/evm (status.ts and the method modules). Regenerate with `node scripts/gen-evm-methods.mjs`.
 */
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { renderEvmMethodTable } from '../../src/rpc/evm/method-table.js';
import { ROOT } from '../helpers/node.js';

t.test('docs/EVM-METHODS.md is up to date', async (t) => {
  const file = path.join(ROOT, 'docs/EVM-METHODS.md');
  const rendered = renderEvmMethodTable();
  t.ok(/\| `eth_blockNumber` \| Y \| yes \| public \|/.test(rendered), 'a served Y method renders as served');
  t.ok(/\| `eth_getWork` \| N \| error -32601, as the spec says \| public \|/.test(rendered), 'an N method renders as the error');
  t.equal(fs.readFileSync(file, 'utf8'), rendered, 'the committed file equals the rendered table (run node scripts/gen-evm-methods.mjs)');
});

/**
 * A real single-validator devnet: `chaind init --dev` then `chaind start`, all servers on loopback.
 * Checks that blocks keep coming, no faster than timeout_commit (1 s) apart by their header times, that /status, /health and the
 * Prometheus endpoint answer, and that SIGTERM shuts down cleanly and a restart resumes the chain.
 */
import fs from 'node:fs';
import t from 'tap';
import { allocPorts, getJson, runCli, sleep, startNode, statusHeight, tmpHome, waitFor, within } from '../helpers/node.js';

t.test('devnet makes blocks, serves status/health/metrics, restarts cleanly', async (t) => {
  const home = tmpHome();
  t.teardown(() => fs.rmSync(home, { recursive: true, force: true }));
  const init = runCli(['init', 'e2e', '--home', home, '--chain-id', 'e2e-1', '--dev']);
  t.equal(init.status, 0, `init exits 0: ${init.stderr}`);

  const ports = await allocPorts();
  let node = startNode(home, ports);
  t.teardown(() => {
    node.proc.kill('SIGKILL');
  });

  const h1 = await waitFor('height >= 2', async () => {
    const h = await statusHeight(ports.rpc);
    return h >= 2n ? h : null;
  }, 60_000).catch((e) => {
    t.comment(node.output());
    throw e;
  });
  // Liveness, then pace from the headers themselves: a wall-clock rate measured by the test would
  // depend on how loaded the machine is (and flaked on a busy 2-core runner). One validator's next
  // block is proposed only after timeout_commit (1 s), so consecutive header times are at least
  // that far apart; blocks coming faster would mean the commit timeout is skipped.
  const h2 = await waitFor('three more blocks', async () => {
    const h = await statusHeight(ports.rpc);
    return h >= h1 + 3n ? h : null;
  }, 60_000);
  const chain = await getJson(`http://127.0.0.1:${ports.rpc}/blockchain?minHeight=${h1}&maxHeight=${h1 + 3n}`);
  const times = (chain.body.result.block_metas as { header: { time: string } }[]).map((m) => Date.parse(m.header.time)).reverse();
  t.equal(times.length, 4, 'four consecutive headers');
  for (let i = 1; i < times.length; i++) {
    t.ok(times[i]! - times[i - 1]! >= 999, `header gap ${times[i]! - times[i - 1]!} ms is at least timeout_commit`);
  }

  const status = await getJson(`http://127.0.0.1:${ports.rpc}/status`);
  t.equal(status.status, 200);
  t.equal(status.body.jsonrpc, '2.0');
  t.equal(status.body.id, -1);
  const r = status.body.result;
  t.equal(r.node_info.network, 'e2e-1');
  t.equal(r.node_info.moniker, 'e2e');
  t.match(r.node_info.version, /^0\.38\./);
  t.match(r.sync_info.latest_block_hash, /^[0-9A-F]{64}$/);
  t.equal(r.sync_info.earliest_block_height, '1');
  t.equal(r.sync_info.catching_up, false);
  t.equal(r.validator_info.pub_key.type, 'consensus/PubKeyEd25519');
  t.equal(r.validator_info.voting_power, '10');
  t.match(r.validator_info.address, /^[0-9A-F]{40}$/);

  const health = await getJson(`http://127.0.0.1:${ports.rpc}/health`);
  t.equal(health.status, 200);
  t.same(health.body.result, {});

  const metrics = await fetch(`http://127.0.0.1:${ports.metrics}/metrics`).then((res) => res.text());
  const m = /^chaind_consensus_height (\d+)/m.exec(metrics);
  t.ok(m && Number(m[1]) >= Number(h2), 'metrics report the height');
  t.match(metrics, /chaind_mempool_size 0/);
  t.match(metrics, /chaind_consensus_block_interval_seconds_count \d+/);

  node.proc.kill('SIGTERM');
  const code = await within(node.exited, 15_000);
  t.equal(code, 0, 'SIGTERM exits 0');
  const before = h2;

  node = startNode(home, ports);
  const resumed = await waitFor('restart passes the old height', async () => {
    const h = await statusHeight(ports.rpc);
    return h > before ? h : null;
  }, 60_000).catch((e) => {
    t.comment(node.output());
    throw e;
  });
  t.ok(resumed > before, 'the chain resumes after a restart');
  const blk1 = await getJson(`http://127.0.0.1:${ports.rpc}/status`);
  t.equal(blk1.body.result.sync_info.earliest_block_height, '1', 'history kept');
  node.proc.kill('SIGTERM');
  t.equal(await node.exited, 0);
});

t.test('start refuses an invalid config file and names the file and field', async (t) => {
  const home = tmpHome();
  t.teardown(() => fs.rmSync(home, { recursive: true, force: true }));
  t.equal(runCli(['init', 'bad', '--home', home, '--chain-id', 'bad-1', '--dev']).status, 0);
  const cfgPath = `${home}/config/config.toml`;
  fs.writeFileSync(cfgPath, fs.readFileSync(cfgPath, 'utf8').replace(/timeout_commit = "[^"]*"/, 'timeout_commit = "soon"'));
  const res = runCli(['start', '--home', home]);
  t.not(res.status, 0);
  t.match(res.stderr, /config\.toml/);
  t.match(res.stderr, /timeout_commit/);

  const home2 = tmpHome();
  t.teardown(() => fs.rmSync(home2, { recursive: true, force: true }));
  t.equal(runCli(['init', 'bad', '--home', home2, '--chain-id', 'bad-1', '--dev']).status, 0);
  const gPath = `${home2}/config/genesis.json`;
  const g = JSON.parse(fs.readFileSync(gPath, 'utf8'));
  g.chain_id = '';
  fs.writeFileSync(gPath, JSON.stringify(g));
  const res2 = runCli(['start', '--home', home2]);
  t.not(res2.status, 0);
  t.match(res2.stderr, /genesis\.json/);
  t.match(res2.stderr, /chain_id/);
});

/**
 * Consensus events on the bus and over websocket subscriptions (cometbft: consensus/state.go,
 * types/event_bus.go, types/events.go): the bridge republishes each of
 * the 11 consensus events once with CometBFT's data shapes, and subscribers get NewRound,
 * NewRoundStep, CompleteProposal and Vote with the registered data names.
 */
import t, { type Test } from 'tap';
import type { ConsensusEventData, ConsensusEventName } from '../../src/consensus/types.js';
import { EventBus, type BusMessage } from '../../src/events/bus.js';
import { bridgeConsensusEvents, CONSENSUS_EVENT_TYPES, type ConsensusEventSource } from '../../src/events/consensus-events.js';
import { createNames } from '../../src/names/index.js';
import { eventDataJSON } from '../../src/rpc/node/methods/events-json.js';
import { SignedMsgType, type BlockID, type Vote } from '../../src/types/block.js';
import { startTestNode, type TestNode } from '../helpers/inproc.js';
import { EventClient, type RpcMessage } from '../helpers/subscriber.js';

class FakeConsensus implements ConsensusEventSource {
  readonly listeners = new Set<(name: ConsensusEventName, data: ConsensusEventData) => void>();
  subscribe(fn: (name: ConsensusEventName, data: ConsensusEventData) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }
  emit(name: string, data: ConsensusEventData): void {
    for (const l of this.listeners) l(name as ConsensusEventName, data);
  }
}

const blockId: BlockID = { hash: new Uint8Array(32).fill(0xab), partSetHeader: { total: 1, hash: new Uint8Array(32).fill(0xcd) } };
const vote: Vote = {
  type: SignedMsgType.Prevote,
  height: 7n,
  round: 1,
  blockId,
  timestamp: 1_700_000_000_123_456_789n,
  validatorAddress: new Uint8Array(20).fill(0x11),
  validatorIndex: 0,
  signature: new Uint8Array(64).fill(0x22),
  extension: new Uint8Array(0),
  extensionSignature: new Uint8Array(0),
};

function sample(name: ConsensusEventName): ConsensusEventData {
  const rs = { height: 7n, round: 1, step: 'RoundStepPrevote' };
  switch (name) {
    case 'Vote':
      return { vote };
    case 'NewRound':
      return { ...rs, step: 'RoundStepNewRound', proposer: { address: new Uint8Array(20).fill(0x33), index: 0 } };
    case 'CompleteProposal':
      return { ...rs, step: 'RoundStepPropose', blockId };
    default:
      return rs;
  }
}

t.test('the bridge republishes each consensus event once, with CometBFT data', async (t) => {
  const cs = new FakeConsensus();
  const bus = new EventBus();
  const seen: BusMessage[] = [];
  bus.subscribe((m) => seen.push(m));
  const stop = bridgeConsensusEvents(cs, bus);
  t.equal(bridgeConsensusEvents(cs, bus), stop, 'a second bridge for the same pair is the same bridge');
  t.equal(cs.listeners.size, 1, 'one listener on consensus');

  for (const name of CONSENSUS_EVENT_TYPES) cs.emit(name, sample(name));
  cs.emit('SomethingElse', sample('NewRoundStep'));
  t.same(
    seen.map((m) => m.type),
    [...CONSENSUS_EVENT_TYPES],
    'all 11 types, once each, nothing else',
  );
  for (const m of seen) t.same(m.attributes, {}, `${m.type}: no attributes (node.event matches the type)`);

  const rs = seen.find((m) => m.type === 'Polka')!;
  t.same(rs.data, { height: 7n, round: 1, step: 'RoundStepPrevote' }, 'EventDataRoundState');
  const nr = seen.find((m) => m.type === 'NewRound')!.data as any;
  t.same(Object.keys(nr), ['height', 'round', 'step', 'proposer'], 'EventDataNewRound');
  const cp = seen.find((m) => m.type === 'CompleteProposal')!.data as any;
  t.same(Object.keys(cp), ['height', 'round', 'step', 'blockId'], 'EventDataCompleteProposal');
  t.equal((seen.find((m) => m.type === 'Vote')!.data as any).vote, vote, 'EventDataVote');

  // The data is a copy: the state machine's object may change afterwards.
  const live = { height: 8n, round: 0, step: 'RoundStepPropose' };
  cs.emit('NewRoundStep', live);
  live.step = 'RoundStepPrevote';
  t.equal((seen.at(-1)!.data as any).step, 'RoundStepPropose', 'later changes do not leak into the message');

  stop();
  t.equal(cs.listeners.size, 0, 'stopped');
  const n = seen.length;
  cs.emit('NewRoundStep', sample('NewRoundStep'));
  t.equal(seen.length, n, 'nothing after stop');
  t.not(bridgeConsensusEvents(cs, bus), stop, 'a new bridge can be made after stop');
});

t.test('nothing is published to a bus nobody listens to', async (t) => {
  const cs = new FakeConsensus();
  const bus = new EventBus();
  let published = 0;
  const realPublish = bus.publish.bind(bus);
  bus.publish = (m) => {
    published++;
    realPublish(m);
  };
  bridgeConsensusEvents(cs, bus);
  cs.emit('NewRoundStep', sample('NewRoundStep'));
  t.equal(published, 0);
  const off = bus.subscribe(() => {});
  cs.emit('NewRoundStep', sample('NewRoundStep'));
  t.equal(published, 1);
  off();
});

t.test('JSON of consensus event data (types/events.go)', async (t) => {
  const names = createNames();
  for (const name of ['NewRoundStep', 'Polka', 'Lock', 'Unlock', 'Relock', 'ValidBlock', 'TimeoutPropose', 'TimeoutWait'] as const) {
    t.same(eventDataJSON(name, sample(name), names), {
      type: 'consensus/event/RoundState',
      value: { height: '7', round: 1, step: 'RoundStepPrevote' },
    }, `${name} carries RoundState`);
  }
  t.same(eventDataJSON('NewRound', sample('NewRound'), names), {
    type: 'consensus/event/NewRound',
    value: { height: '7', round: 1, step: 'RoundStepNewRound', proposer: { address: '33'.repeat(20), index: 0 } },
  });
  const hashJson = { hash: 'AB'.repeat(32), parts: { total: 1, hash: 'CD'.repeat(32) } };
  t.same(eventDataJSON('CompleteProposal', sample('CompleteProposal'), names), {
    type: 'consensus/event/CompleteProposal',
    value: { height: '7', round: 1, step: 'RoundStepPropose', block_id: hashJson },
  });
  const v = eventDataJSON('Vote', sample('Vote'), names) as any;
  t.equal(v.type, 'consensus/event/Vote');
  t.same(v.value, {
    Vote: {
      type: 1,
      height: '7',
      round: 1,
      block_id: hashJson,
      timestamp: '2023-11-14T22:13:20.123456789Z',
      validator_address: '11'.repeat(20),
      validator_index: 0,
      signature: Buffer.alloc(64, 0x22).toString('base64'),
      extension: null,
      extension_signature: null,
    },
  }, 'EventDataVote: the Go field name "Vote", Vote JSON as §4.5');
  t.equal(eventDataJSON('Polka', sample('Polka'), createNames({ upstreamNames: true })).type, 'tendermint/event/RoundState', 'upstream names');
});

async function subscribe(c: EventClient, id: string, query: string, t: Test): Promise<void> {
  t.same((await c.call(id, 'subscribe', { query })).result, {}, `subscribed to ${query}`);
}

t.test('NewRoundStep, NewRound, CompleteProposal and Vote reach subscribers', async (t) => {
  const tn: TestNode = await startTestNode({ timeoutCommit: '100ms' });
  t.teardown(() => tn.close());
  // Idempotent: a no-op when the composition root already bridged.
  bridgeConsensusEvents(tn.ctx.consensus, tn.ctx.bus);
  const c = await EventClient.open(tn.rpcPort);
  t.teardown(() => c.close());
  await subscribe(c, 'step', "node.event='NewRoundStep'", t);
  await subscribe(c, 'vote', "tm.event = 'Vote'", t);
  await subscribe(c, 'round', "node.event='NewRound'", t);
  await subscribe(c, 'prop', "node.event='CompleteProposal'", t);

  const steps: RpcMessage[] = [];
  for (let i = 0; i < 12; i++) steps.push(await c.event('step', 10_000));
  for (const s of steps) {
    t.equal(s.result.data.type, 'consensus/event/RoundState');
    t.same(Object.keys(s.result.data.value), ['height', 'round', 'step']);
    t.match(s.result.data.value.step, /^RoundStep(NewHeight|NewRound|Propose|Prevote|PrevoteWait|Precommit|PrecommitWait|Commit)$/);
    t.same(s.result.events, { 'node.event': ['NewRoundStep'] });
  }
  const names = new Set(steps.map((s) => s.result.data.value.step));
  for (const want of ['RoundStepPropose', 'RoundStepPrevote', 'RoundStepPrecommit', 'RoundStepCommit']) t.ok(names.has(want), `saw ${want}`);
  const heights = steps.map((s) => BigInt(s.result.data.value.height));
  for (let i = 1; i < heights.length; i++) t.ok(heights[i]! >= heights[i - 1]!, 'heights never go back');

  const votes: RpcMessage[] = [await c.event('vote', 10_000), await c.event('vote', 10_000)];
  const types = new Set<number>();
  for (let i = 0; i < 6; i++) votes.push(await c.event('vote', 10_000));
  for (const v of votes) {
    t.equal(v.result.data.type, 'consensus/event/Vote');
    t.equal(v.result.query, "tm.event = 'Vote'");
    t.same(v.result.events, { 'node.event': ['Vote'] });
    const vote = v.result.data.value.Vote;
    types.add(vote.type);
    t.equal(vote.validator_address, Buffer.from(tn.ctx.validator.address).toString('hex').toUpperCase(), 'our validator voted');
    t.match(vote.signature, /^[A-Za-z0-9+/]{86}==$/, 'a 64-byte signature');
  }
  t.same([...types].sort(), [1, 2], 'prevotes and precommits');

  const round = await c.event('round', 10_000);
  t.equal(round.result.data.type, 'consensus/event/NewRound');
  t.equal(round.result.data.value.step, 'RoundStepNewRound');
  t.same(round.result.data.value.proposer, { address: Buffer.from(tn.ctx.validator.address).toString('hex').toUpperCase(), index: 0 });

  const prop = await c.event('prop', 10_000);
  t.equal(prop.result.data.type, 'consensus/event/CompleteProposal');
  const h = BigInt(prop.result.data.value.height);
  const deadline = Date.now() + 10_000;
  while (tn.ctx.storage.blocks.height() < h && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  const meta = tn.ctx.storage.blocks.loadBlockMeta(h)!;
  t.equal(prop.result.data.value.block_id.hash, Buffer.from(meta.blockId.hash).toString('hex').toUpperCase(), 'the proposal is the block committed at that height');
});

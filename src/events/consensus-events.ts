/**
 * Republishes the consensus state machine's events on the event bus, as CometBFT's consensus
 * publishes them on its EventBus (cometbft: consensus/state.go → types/event_bus.go
 * PublishEventNewRoundStep, PublishEventVote, …; types/events.go for the data types).
 *
 * Data keeps the node's internal form (bigint heights, byte arrays) in CometBFT's shapes:
 * - NewRound: EventDataNewRound `{height, round, step, proposer: {address, index}}`;
 * - CompleteProposal: EventDataCompleteProposal `{height, round, step, blockId}`;
 * - Vote: EventDataVote `{vote}`;
 * - NewRoundStep, Polka, Lock, Unlock, Relock, ValidBlock, TimeoutPropose, TimeoutWait:
 *   EventDataRoundState `{height, round, step}` with the step's name (`RoundStepPropose`).
 * The RPC edge renders them to JSON with the registered names (src/rpc/node/methods/events-json.ts).
 *
 * Attributes are empty: CometBFT publishes these with only `tm.event` in the event map
 * (event_bus.go Publish), and queries match `node.event` / `tm.event` on the message type
 * (src/events/query.ts Query.matches).
 */
import type { ConsensusEventData, ConsensusEventName, EventDataCompleteProposal, EventDataNewRound, EventDataRoundState, EventDataVote } from '../consensus/types.js';
import { CONSENSUS_EVENT_TYPES } from '../names/index.js';
import type { BusMessage, EventBus } from './bus.js';

export { CONSENSUS_EVENT_TYPES };
const KNOWN = new Set<string>(CONSENSUS_EVENT_TYPES);

/** What the bridge needs of the consensus state machine (src/consensus/state.ts). */
export interface ConsensusEventSource {
  subscribe(fn: (name: ConsensusEventName, data: ConsensusEventData) => void): () => void;
}

/** Bridges already made, so that a second call for the same pair does not publish twice. */
const bridges = new WeakMap<ConsensusEventSource, Map<EventBus, () => void>>();

/**
 * Copies the event data into CometBFT's shape for `name`: the bus keeps messages after the state
 * machine has moved on, so nothing of the live round state is shared.
 */
export function consensusEventData(name: ConsensusEventName, data: ConsensusEventData): ConsensusEventData {
  switch (name) {
    case 'Vote':
      return { vote: (data as EventDataVote).vote } satisfies EventDataVote;
    case 'NewRound': {
      const d = data as EventDataNewRound;
      return { height: d.height, round: d.round, step: d.step, proposer: { address: d.proposer.address, index: d.proposer.index } } satisfies EventDataNewRound;
    }
    case 'CompleteProposal': {
      const d = data as EventDataCompleteProposal;
      return { height: d.height, round: d.round, step: d.step, blockId: d.blockId } satisfies EventDataCompleteProposal;
    }
    default: {
      const d = data as EventDataRoundState;
      return { height: d.height, round: d.round, step: d.step } satisfies EventDataRoundState;
    }
  }
}

/**
 * Publishes every consensus event of `consensus` on `bus` from now on; returns the function that
 * stops it. Calling it again for the same pair returns the same stopper and publishes nothing twice.
 */
export function bridgeConsensusEvents(consensus: ConsensusEventSource, bus: EventBus): () => void {
  let perBus = bridges.get(consensus);
  const existing = perBus?.get(bus);
  if (existing) return existing;
  const off = consensus.subscribe((name, data) => {
    if (!KNOWN.has(name)) return;
    // Publishing to a bus nobody listens to would only copy data: skip it (the common case for
    // NewRoundStep, ~7 per block, when no client subscribed).
    if (bus.listenerCount === 0) return;
    const msg: BusMessage = { type: name, data: consensusEventData(name, data), attributes: {} };
    bus.publish(msg);
  });
  const stop = () => {
    off();
    bridges.get(consensus)?.delete(bus);
  };
  if (!perBus) {
    perBus = new Map();
    bridges.set(consensus, perBus);
  }
  perBus.set(bus, stop);
  return stop;
}

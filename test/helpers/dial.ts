/**
 * What the dial_seeds and dial_peers tests share: a node with the unsafe routes, the URI form of
 * an address list, and peer addresses CometBFT refuses (with its texts) or accepts.
 */
import { startTestNode, type TestNode } from './inproc.js';

export const ID = '0123456789abcdef0123456789abcdef01234567';
/** A JSON array of strings as the URI argument (http_uri_handler.go: a JSON array literal). */
export const arrayArg = (name: string, xs: string[]) => `${name}=${encodeURIComponent(JSON.stringify(xs))}`;
/** A node with the unsafe routes; its dial attempts are logged (at error level) and fail. */
export function unsafeNode(): Promise<TestNode> {
  return startTestNode({ timeoutCommit: '60s', flags: { 'rpc.unsafe': true } });
}
/** Address errors, each CometBFT's text (p2p/netaddress.go NewNetAddressString, net.SplitHostPort, strconv). */
export const BAD_ADDRESSES: [string, string][] = [
  ['1.2.3.4:26656', 'address (1.2.3.4:26656) does not contain ID'],
  [`${ID}@a@1.2.3.4:1`, `address (${ID}@a@1.2.3.4:1) does not contain ID`],
  ['@1.2.3.4:26656', 'invalid address (@1.2.3.4:26656): no ID'],
  ['zz@1.2.3.4:26656', "invalid address (zz@1.2.3.4:26656): encoding/hex: invalid byte: U+007A 'z'"],
  ['abc@1.2.3.4:26656', 'invalid address (abc@1.2.3.4:26656): encoding/hex: odd length hex string'],
  ['abcd@1.2.3.4:26656', 'invalid address (abcd@1.2.3.4:26656): invalid hex length - got 2, expected 20'],
  [`tcp://zz@1.2.3.4:26656`, "invalid address (zz@1.2.3.4:26656): encoding/hex: invalid byte: U+007A 'z'"],
  [`${ID}@1.2.3.4`, 'invalid address (1.2.3.4): address 1.2.3.4: missing port in address'],
  [`${ID}@1:2:3:4`, 'invalid address (1:2:3:4): address 1:2:3:4: too many colons in address'],
  [`${ID}@[::1`, "invalid address ([::1): address [::1: missing ']' in address"],
  [`${ID}@:26656`, 'invalid address (:26656): host is empty'],
  [`${ID}@1.2.3.4:http`, 'invalid address (http): strconv.ParseUint: parsing "http": invalid syntax'],
  [`${ID}@1.2.3.4:`, 'invalid address (): strconv.ParseUint: parsing "": invalid syntax'],
  [`${ID}@1.2.3.4:65536`, 'invalid address (65536): strconv.ParseUint: parsing "65536": value out of range'],
  [`${ID}@[::1]:-1`, 'invalid address (-1): strconv.ParseUint: parsing "-1": invalid syntax'],
  [`${ID}@localhost:x`, 'invalid address (x): strconv.ParseUint: parsing "x": invalid syntax'],
];
export const GOOD_ADDRESSES = [`${ID}@127.0.0.1:26656`, `tcp://${ID.toUpperCase()}@[::1]:26656`, `${ID}@localhost:0080`];

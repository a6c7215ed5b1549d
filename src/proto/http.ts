/**
 * The REST bindings declared in proto/ with `option (google.api.http)`, for the REST gateway: one
 * entry per (method, binding), additional_bindings included. Paths are the spec's (`/chain/…`);
 * map them with src/names `restPath` for upstream spelling.
 */
import { getOption, hasOption, type DescMethod, type DescService } from '@bufbuild/protobuf';
import { http } from '../gen/google/api/annotations_pb.js';
import type { HttpRule } from '../gen/google/api/http_pb.js';
import { protoRegistry } from './registry.js';

export interface HttpBinding {
  service: DescService;
  method: DescMethod;
  /** GET, POST, PUT, DELETE, PATCH or a custom verb. */
  verb: string;
  /** URL template, e.g. `/chain/auth/v1beta1/accounts/{address}`. */
  path: string;
  /** Request body: '' (none; fields from path and query), '*' (whole request) or a field name. */
  body: string;
}

function bindingsOf(service: DescService, method: DescMethod, rule: HttpRule, out: HttpBinding[]): void {
  const p = rule.pattern;
  let verb: string | undefined;
  let path: string | undefined;
  switch (p.case) {
    case 'get':
    case 'put':
    case 'post':
    case 'delete':
    case 'patch':
      verb = p.case.toUpperCase();
      path = p.value;
      break;
    case 'custom':
      verb = p.value.kind;
      path = p.value.path;
      break;
    default:
      break;
  }
  if (verb !== undefined && path !== undefined) out.push({ service, method, verb, path, body: rule.body });
  for (const extra of rule.additionalBindings) bindingsOf(service, method, extra, out);
}

/** Every HTTP binding of every registered service, in registry order. */
export function httpBindings(): HttpBinding[] {
  const out: HttpBinding[] = [];
  for (const d of protoRegistry) {
    if (d.kind !== 'service') continue;
    for (const m of d.methods) if (hasOption(m, http)) bindingsOf(d, m, getOption(m, http), out);
  }
  return out;
}

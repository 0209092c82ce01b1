/**
 * The keeper's request bodies, one TypeBox schema each, strict like every protocol decoder. Requests are listed in
 * `KEEPER_REQUESTS` (see queries.ts and docs/state.md); only `instance {id}` carries a body.
 */
import { Id } from '../../protocols/event-fields.js';
import { compile, Type } from '../../protocols/schema-kit.js';

export const KEEPER_REQUESTS = [
  'state',
  'topology',
  'instances',
  'instance',
  'placementState',
  'toReplace',
  'state-snapshot',
] as const;

const CLOSED = { additionalProperties: false } as const;

export const KeeperRequests = {
  instance: Type.Object({ type: Type.Literal('instance'), id: Id }, CLOSED),
};

const instanceCodec = compile(KeeperRequests.instance, 'body', 'body');

export function decodeInstanceRequest(body: unknown): { id: string } {
  return { id: instanceCodec.decode(body).id };
}

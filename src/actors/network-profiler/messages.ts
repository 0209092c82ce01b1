/** Strict decoding of the messages other actors may send the network profiler (internal events are refused). */
import { arr, guarded, id, int, obj, oneOf, opt, str } from '../../core/topology/reader.js';
import { ValidationError } from '../../core/errors.js';
import { INTERFACE_TYPES } from '../../protocols/events.js';
import type { PeerAddress, PeerTarget } from '../../profiler/reachability.js';
import type { ProfilerEvent } from './machine.js';

const ip = (v: unknown, p: string): string => str('event', v, p, { max: 64, pattern: /^[0-9a-fA-F.:]+$/ });

function address(v: unknown, p: string): PeerAddress {
  if (typeof v === 'string') return { ip: ip(v, p) };
  const o = obj('event', v, p, ['ip'], ['type', 'port']);
  const type = opt(o.type, (x) => oneOf('event', x, `${p}.type`, INTERFACE_TYPES));
  const port = opt(o.port, (x) => int('event', x, `${p}.port`, 1, 65535));
  return { ip: ip(o.ip, `${p}.ip`), ...(type ? { type } : {}), ...(port ? { port } : {}) };
}

function peer(v: unknown, p: string): PeerTarget {
  const o = obj('event', v, p, ['nodeId', 'port', 'addresses'], ['incarnation']);
  const incarnation = opt(o.incarnation, (x) => int('event', x, `${p}.incarnation`, 0));
  return { nodeId: id('event', o.nodeId, `${p}.nodeId`), ...(incarnation !== undefined ? { incarnation } : {}), port: int('event', o.port, `${p}.port`, 1, 65535), addresses: arr('event', o.addresses, `${p}.addresses`, address, 64) };
}

/** `peers {peers}`, `probe`, `measure {sink?, ip?}`. */
export function decodeProfilerEvent(body: unknown): ProfilerEvent {
  return guarded('event', () => {
    const type = (body as { type?: unknown } | null)?.type;
    switch (type) {
      case 'peers': {
        const o = obj('event', body, 'body', ['type', 'peers']);
        return { type: 'peers', peers: arr('event', o.peers, 'body.peers', peer, 1024) };
      }
      case 'probe':
        obj('event', body, 'body', ['type']);
        return { type: 'probe' };
      case 'measure': {
        const o = obj('event', body, 'body', ['type'], ['sink', 'ip']);
        const sink = opt(o.sink, (x) => id('event', x, 'body.sink'));
        const at = opt(o.ip, (x) => ip(x, 'body.ip'));
        return { type: 'measure', ...(sink ? { sink } : {}), ...(at ? { ip: at } : {}) };
      }
      default:
        throw new ValidationError('event', 'body.type', `unknown profiler message ${JSON.stringify(type)?.slice(0, 40)}`);
    }
  });
}

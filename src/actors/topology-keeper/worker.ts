/**
 * Worker entry of the topology keeper (the shell): serves the pure machine, answers read requests from the
 * current buffer, forwards applied entries to `options.eventsTo` (default `node-events`, the API's event feed),
 * logs rejected entries and, when `options.reportTo` names an actor (normally `cluster`), tells it about
 * rejections and about each new gap so it can ask the leader for the missing range.
 *
 * Messages in: `event {indexed}`, `events {entries}`, `install-snapshot {snapshot, force?}`.
 * Requests: state, topology, instances, instance {id}, placementState, toReplace, state-snapshot,
 * apply {entries} (→ effects), install-snapshot {snapshot, force?} (→ effects). The runtime's built-in `snapshot`
 * request returns the compact view (`KeeperView`); the full state for catch-up is `state-snapshot`.
 */
import { serveActor } from '../../runtime/serve-actor.js';
import { topologyKeeperMachine, type KeeperContext, type KeeperEvent } from './machine.js';
import { decodeApplyRequest, decodeInstanceRequest, decodeKeeperEvent } from './messages.js';
import {
  instanceAnswer,
  instancesAnswer,
  keeperView,
  placementStateAnswer,
  snapshotAnswer,
  stateAnswer,
  toReplaceAnswer,
  topologyAnswer,
} from './queries.js';

interface KeeperOptions {
  readonly nodeId?: string;
  /** where rejections and gaps are reported (normally `cluster`); unset: only logged and shown in the view */
  readonly reportTo?: string;
  /** where applied entries are forwarded as `{type: 'applied', entries}` (default `node-events`, the API's feed); null: nowhere */
  readonly eventsTo?: string | null;
}

const contextOf = (actor: { getSnapshot(): { context: KeeperContext } }): KeeperContext => actor.getSnapshot().context;

serveActor<typeof topologyKeeperMachine, KeeperOptions>({
  name: 'topology-keeper',
  machine: topologyKeeperMachine,
  input: () => ({}),
  decodeEvent: (body) => decodeKeeperEvent(body),
  view: (snapshot) =>
    keeperView(snapshot.value, snapshot.context.buffer, snapshot.context.rejectedCount, snapshot.context.lastRejection),
  requests: {
    state: (_body, ctx) => stateAnswer(contextOf(ctx.actor).buffer),
    topology: (_body, ctx) => topologyAnswer(contextOf(ctx.actor).buffer),
    instances: (_body, ctx) => instancesAnswer(contextOf(ctx.actor).buffer),
    instance: (body, ctx) => instanceAnswer(contextOf(ctx.actor).buffer, decodeInstanceRequest(body).id),
    placementState: (_body, ctx) => placementStateAnswer(contextOf(ctx.actor).buffer),
    toReplace: (_body, ctx) => toReplaceAnswer(contextOf(ctx.actor).buffer),
    'state-snapshot': (_body, ctx) => snapshotAnswer(contextOf(ctx.actor).buffer),
    // xstate processes a send synchronously, so the context read right after holds this input's effects.
    apply: (body, ctx) => outcome(ctx.actor, decodeApplyRequest(body)),
    'install-snapshot': (body, ctx) => outcome(ctx.actor, decodeKeeperEvent(body)),
  },
  setup: (ctx) => {
    const options: KeeperOptions = ctx.options ?? {};
    let lastGap = '';
    const subs = [
      ctx.actor.on('topology.rejected', ({ rejection }) => {
        ctx.log.warn('rejected log entry', {
          index: rejection.index,
          code: rejection.error.code,
          message: rejection.error.message,
        });
        if (options.reportTo)
          ctx.send(options.reportTo, { type: 'topology.rejected', index: rejection.index, error: rejection.error });
      }),
      ctx.actor.on('topology.gap', ({ from, to }) => {
        const key = `${from}-${to}`;
        if (key === lastGap) return; // ask once per distinct gap, not on every held entry (lastIndex only grows)
        lastGap = key;
        if (options.reportTo) ctx.send(options.reportTo, { type: 'topology.gap', from, to });
      }),
      ctx.actor.on('topology.changed', ({ applied }) => {
        const to = options.eventsTo === undefined ? 'node-events' : options.eventsTo;
        if (to && applied.length > 0) ctx.send(to, { type: 'applied', entries: applied });
      }),
    ];
    return () => {
      for (const s of subs) s.unsubscribe();
    };
  },
});

function outcome(actor: { send(e: KeeperEvent): void; getSnapshot(): { context: KeeperContext } }, event: KeeperEvent) {
  actor.send(event);
  const { buffer, lastEffects } = actor.getSnapshot().context;
  // Applied entries are not echoed back: the caller sent them.
  const effects = lastEffects.map((e) => (e.kind === 'applied' ? { kind: e.kind, index: e.index, type: e.type } : e));
  return { effects, lastIndex: buffer.state.lastIndex, pending: buffer.pending.length };
}

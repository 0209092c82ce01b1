// The actor measured by the mailbox benchmark: counts one-way events, echoes request payloads.
import { ValidationError } from '../../src/protocols/errors.js';
import { serveActor } from '../../src/runtime/serve-actor.js';

import { echoMachine as machine } from './echo-machine.js';

serveActor({
  name: 'echo',
  machine,
  decodeEvent: (body) => {
    if (body.type !== 'tick') throw new ValidationError('event', 'type', 'expected tick');
    return { type: 'tick' as const };
  },
  // The view changes on every tick; pushing it would measure snapshot traffic, not the mailbox.
  view: () => null,
  requests: {
    echo: (body) => body.payload,
    seen: (_body, ctx) => ctx.actor.getSnapshot().context.seen,
  },
});

// The machine both sides of the mailbox benchmark run, so the comparison is transport against transport.
import { assign, setup } from 'xstate';

export const echoMachine = setup({
  types: { context: {} as { seen: number }, events: {} as { type: 'tick' } },
}).createMachine({
  context: { seen: 0 },
  on: { tick: { actions: assign({ seen: ({ context }) => context.seen + 1 }) } },
});

import t from 'tap';
import { TorusError, ValidationError } from '../../src/protocols/errors.js';
import { asBodyError, inCallersWords } from '../../src/api/callers-words.js';
import { decodeCommand } from '../../src/protocols/commands.js';

t.test("a command decoder's refusal reaches an API client in the client's words", async (t) => {
  let internal: unknown;
  try {
    decodeCommand({ type: 'PlaceInstance', workload: { kind: 'ring', id: ' w', memoryBytes: 1, layers: 1 } });
  } catch (error) {
    internal = error;
  }
  t.match((internal as Error).message, /^event command\.workload\.id: /, 'the cluster names its own command');
  const answer = asBodyError(internal) as ValidationError;
  t.equal(answer.code, 'TORUS_API_VALIDATION');
  t.equal(answer.httpStatus, 400);
  t.same(answer.details, { where: 'body', path: 'workload.id' });
  t.match(answer.message, /^body workload\.id: does not match/, 'the field as the caller sent it');
  t.notMatch(answer.message, /event|command\./);
  await t.rejects(
    inCallersWords(() => Promise.reject(internal)),
    { message: /^body workload\.id: / },
  );
  const state = new TorusError('TORUS_PLACEMENT_REFUSED', 'no room');
  t.equal(asBodyError(state), state, 'other errors pass unchanged');
  const frame = new ValidationError('frame', 'hello.port', 'out of range');
  t.equal(asBodyError(frame), frame, 'a protocol error about something else than the command passes unchanged');
});

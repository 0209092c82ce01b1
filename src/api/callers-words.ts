import { TorusError, ValidationError } from '../protocols/errors.js';

/**
 * A body the API checked goes on to the leader as a cluster command, whose decoder names fields from the
 * command (`event command.workload.id: ...`). The API's schemas are built from the same definitions, so that
 * decoder should never refuse what the edge let through; if it does, the caller still gets its own words
 * (`body workload.id: ...`), never the internal names, and the same 400.
 */
export function inCallersWords<T>(work: () => Promise<T>): Promise<T> {
  return work().catch((error: unknown) => {
    throw asBodyError(error);
  });
}

export function asBodyError(error: unknown): unknown {
  if (!(error instanceof TorusError) || error.code !== 'TORUS_PROTOCOL_INVALID') return error;
  const path = typeof error.details.path === 'string' ? error.details.path : '';
  if (path !== 'command' && !path.startsWith('command.')) return error;
  const why = error.message.includes(': ') ? error.message.slice(error.message.indexOf(': ') + 2) : error.message;
  return new ValidationError('body', path.slice('command.'.length), why);
}

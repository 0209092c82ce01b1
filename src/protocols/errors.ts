/**
 * The one error registry: every code torus can report, mapped to its HTTP status.
 * Error classes carry `code`, `details` and `cause`; `toJSON()` is the one wire shape for the API
 * (`{"error": err.toJSON()}`) and for worker → supervisor failure messages.
 */
export const ERROR_STATUS = {
  TORUS_API_VALIDATION: 400,
  TORUS_API_NOT_FOUND: 404,
  TORUS_API_BODY_TOO_LARGE: 413,
  TORUS_API_METHOD_NOT_ALLOWED: 405,
  TORUS_API_FORBIDDEN: 403,
  TORUS_API_UNSUPPORTED_MEDIA_TYPE: 415,
  TORUS_API_UNREACHABLE: 502,
  TORUS_CONFIG_INVALID: 400,
  TORUS_PROTOCOL_INVALID: 400,
  TORUS_NODE_UNKNOWN: 404,
  TORUS_INSTANCE_UNKNOWN: 404,
  TORUS_PLACEMENT_REFUSED: 409,
  TORUS_NO_LEADER: 503,
  TORUS_NO_QUORUM: 503,
  TORUS_ACTOR_UNKNOWN: 404,
  TORUS_ACTOR_TIMEOUT: 504,
  TORUS_ACTOR_STOPPED: 503,
  TORUS_ACTOR_FAILED: 500,
  TORUS_CHANNEL_CLOSED: 503,
  TORUS_SHUTTING_DOWN: 503,
  TORUS_RUNNER_FAILED: 500,
  TORUS_RING_PEER_LOST: 502,
  TORUS_RING_TIMEOUT: 504,
  TORUS_CANCELLED: 499,
  TORUS_PROBE_BUSY: 503,
  TORUS_EVENT_OUT_OF_ORDER: 409,
  TORUS_EVENT_CONFLICT: 409,
  TORUS_EVENT_STALE: 409,
  TORUS_INTERNAL: 500,
  /** A configured bound was reached (e.g. --max-instances); the message names it. */
  TORUS_QUOTA_EXCEEDED: 429,
  /** A write the leader could not get onto a quorum of the members: never applied by this leader, outcome unknown. */
  TORUS_NOT_COMMITTED: 503,
  /** A saved cluster-state file is damaged: the node refuses to start (`--repair-state` recovers). */
  TORUS_STATE_CORRUPT: 500,
  // HTTP API security: no/wrong credential, a Host not of this node (DNS rebinding), a foreign Origin,
  // a server-wide limit reached (connections, SSE clients), a per-client write rate exceeded.
  TORUS_UNAUTHENTICATED: 401,
  TORUS_HOST_REFUSED: 421,
  TORUS_ORIGIN_REFUSED: 403,
  // A credential sent over plain HTTP from another machine (it crossed the LAN in clear): use the https URL.
  TORUS_TLS_REQUIRED: 403,
  // The API's certificate is not the one pinned for that address (CLI side, nothing was sent).
  TORUS_TLS_FINGERPRINT_MISMATCH: 502,
  TORUS_LIMIT_REACHED: 503,
  TORUS_RATE_LIMITED: 429,
  TORUS_MEMBER_CONNECTED: 409,
  /** A node asked to remove itself from the membership: a well-formed request its state refuses. */
  TORUS_MEMBER_SELF: 409,
  /** A chosen instance id that an instance already has. */
  TORUS_INSTANCE_EXISTS: 409,
  TORUS_ARTIFACT_UNKNOWN: 404,
  TORUS_ARTIFACT_NO_SPACE: 507,
  TORUS_ARTIFACT_UNAVAILABLE: 503,
  TORUS_ARTIFACT_CORRUPT: 502,
  TORUS_ARTIFACT_PROOF_REFUSED: 403,
  TORUS_ARTIFACT_BUSY: 409,
  /** A workload names an artifact as its model that has no model record (not added as a model directory). */
  TORUS_ARTIFACT_NOT_MODEL: 409,
  /** A model directory (config.json, safetensors headers, index) that cannot be read; the message names the file and byte. */
  TORUS_MODEL_INVALID: 400,
} as const satisfies Record<string, number>;

export type ErrorCode = keyof typeof ERROR_STATUS;
export type ErrorDetails = Readonly<Record<string, unknown>>;

export interface ErrorJson {
  readonly code: ErrorCode;
  readonly message: string;
  readonly details: ErrorDetails;
}

export class TorusError extends Error {
  readonly code: ErrorCode;
  readonly details: ErrorDetails;

  constructor(code: ErrorCode, message: string, details: ErrorDetails = {}, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
    this.details = details;
  }

  get httpStatus(): number {
    return ERROR_STATUS[this.code];
  }

  toJSON(): ErrorJson {
    return { code: this.code, message: this.message, details: this.details };
  }
}

/** Bad input at an edge (API body, peer frame, config file): names where and the JSON path. */
export class ValidationError extends TorusError {
  constructor(where: 'body' | 'query' | 'params' | 'frame' | 'config' | 'flag' | 'event', path: string, why: string) {
    super(
      where === 'frame' || where === 'event'
        ? 'TORUS_PROTOCOL_INVALID'
        : where === 'config' || where === 'flag'
          ? 'TORUS_CONFIG_INVALID'
          : 'TORUS_API_VALIDATION',
      `${where} ${path || '(root)'}: ${why}`,
      { where, path },
    );
  }
}

/**
 * A send on a port, socket or channel that is already closed. During shutdown this is expected and
 * swallowed by the relay; in normal running it is reported to the supervisor as a fault.
 */
export class ClosedResourceError extends TorusError {
  constructor(resource: string, options?: ErrorOptions) {
    super('TORUS_CHANNEL_CLOSED', `${resource} is closed`, { resource }, options);
  }
}

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.hasOwn(ERROR_STATUS, value);
}

/** Rebuilds an error that crossed a thread or socket as plain data (structured clone and msgpack drop the class). */
export function errorFromJson(json: unknown): TorusError {
  if (json && typeof json === 'object') {
    const { code, message, details } = json as Partial<ErrorJson>;
    if (isErrorCode(code) && typeof message === 'string') {
      return new TorusError(code, message, details && typeof details === 'object' ? details : {});
    }
  }
  return new TorusError('TORUS_INTERNAL', 'malformed error payload', { payload: String(json) });
}

export function asTorusError(error: unknown): TorusError {
  if (error instanceof TorusError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new TorusError('TORUS_INTERNAL', message, {}, { cause: error });
}

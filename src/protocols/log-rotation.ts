/**
 * How a runner's stdout and stderr are kept on disk: each stream in numbered files that rotate at a size, at most
 * so many of them (Nomad's `logs { max_files, max_file_size }`). A node has defaults (flags, config keys); an
 * instance request may set its own (`workload.logs`), which wins on every node of the placement.
 */
import { CLOSED, Count } from './event-fields.js';
import { Type, type Shape } from './schema-kit.js';

export interface LogRotation {
  /** Files kept per stream, the one being written included. */
  readonly maxFiles: number;
  /** A file rotates once it holds this many bytes. */
  readonly maxFileBytes: number;
}

/** Nomad's defaults: 10 files × 10 MiB, so a chatty job holds at most 100 MiB per stream. */
export const DEFAULT_LOG_ROTATION: LogRotation = { maxFiles: 10, maxFileBytes: 10 * 1024 * 1024 };

export const MIN_LOG_FILE_BYTES = 1024;
export const MAX_LOG_FILE_BYTES = 2 ** 40;
export const MAX_LOG_FILES = 1000;

export const LogsSpec = Type.Object(
  {
    maxFiles: Type.Optional(Count(1, MAX_LOG_FILES)),
    maxFileBytes: Type.Optional(
      Type.Integer({
        minimum: MIN_LOG_FILE_BYTES,
        maximum: MAX_LOG_FILE_BYTES,
        description: 'a log file rotates at this size, bytes',
      }),
    ),
  },
  {
    ...CLOSED,
    description:
      "how each rank's stdout and stderr are kept on its node: at most maxFiles files of maxFileBytes each (the oldest is removed); absent fields: the node's defaults (10 × 10 MiB)",
  },
);
export type LogsSpec = Shape<typeof LogsSpec>;

/** The node's defaults with the instance's own settings over them. */
export function rotationFor(node: LogRotation, instance: LogsSpec | undefined): LogRotation {
  return {
    maxFiles: instance?.maxFiles ?? node.maxFiles,
    maxFileBytes: instance?.maxFileBytes ?? node.maxFileBytes,
  };
}

/** A trivial pool task (used by tests and as the template for real ones): returns its input with the worker's thread id. */
import { threadId } from 'node:worker_threads';

export default function echo(input: unknown): { input: unknown; threadId: number } {
  return { input, threadId };
}

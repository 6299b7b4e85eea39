import type { EventEmitter } from 'node:events';

/** What writeRespectingBackpressure needs of a response: Node's writable side. */
export interface WritableResponse extends EventEmitter {
  write(chunk: string): boolean;
}

export type WriteOutcome = 'written' | 'gone' | 'stalled';

/**
 * Writes a chunk; when the response's buffer is full (write answers false), waits until it has
 * drained before answering, so a slow reader holds one chunk in memory, never the stream. Answers
 * 'gone' when the client has left (`gone` aborted, before or while waiting) and 'stalled' when it
 * read nothing for `stallMs`.
 */
export function writeRespectingBackpressure(res: WritableResponse, chunk: string, gone: AbortSignal, stallMs: number): Promise<WriteOutcome> {
  if (gone.aborted) return Promise.resolve('gone');
  if (res.write(chunk)) return Promise.resolve('written');
  if (gone.aborted) return Promise.resolve('gone');
  return new Promise((resolve) => {
    const finish = (outcome: WriteOutcome) => {
      clearTimeout(timer);
      res.off('drain', onDrain);
      gone.removeEventListener('abort', onGone);
      resolve(outcome);
    };
    const onDrain = () => finish('written');
    const onGone = () => finish('gone');
    const timer = setTimeout(() => finish('stalled'), stallMs);
    res.on('drain', onDrain);
    gone.addEventListener('abort', onGone);
  });
}

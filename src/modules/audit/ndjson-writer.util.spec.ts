import { EventEmitter } from 'node:events';
import { writeRespectingBackpressure } from './ndjson-writer.util';

/** A response whose buffer is full after every write until the test drains it. */
class FullResponse extends EventEmitter {
  written: string[] = [];
  constructor(private readonly accepts: boolean) {
    super();
  }
  write(chunk: string): boolean {
    this.written.push(chunk);
    return this.accepts;
  }
}

describe('writeRespectingBackpressure', () => {
  it('answers at once when the response takes the chunk', async () => {
    const res = new FullResponse(true);
    await expect(writeRespectingBackpressure(res, 'a\n', new AbortController().signal, 60_000)).resolves.toBe('written');
    expect(res.written).toEqual(['a\n']);
  });

  it('waits for drain when the buffer is full, and leaves no listener behind', async () => {
    const res = new FullResponse(false);
    let settled = false;
    const outcome = writeRespectingBackpressure(res, 'a\n', new AbortController().signal, 60_000).then((o) => {
      settled = true;
      return o;
    });
    await new Promise((r) => setImmediate(r));
    expect(settled).toBe(false);
    res.emit('drain');
    await expect(outcome).resolves.toBe('written');
    expect(res.listenerCount('drain')).toBe(0);
  });

  it('stops waiting when the client leaves, and writes nothing once it has left', async () => {
    const res = new FullResponse(false);
    const gone = new AbortController();
    const outcome = writeRespectingBackpressure(res, 'a\n', gone.signal, 60_000);
    gone.abort();
    await expect(outcome).resolves.toBe('gone');
    await expect(writeRespectingBackpressure(res, 'b\n', gone.signal, 60_000)).resolves.toBe('gone');
    expect(res.written).toEqual(['a\n']);
  });

  it('gives up on a client that reads nothing for the stall time', async () => {
    const res = new FullResponse(false);
    await expect(writeRespectingBackpressure(res, 'a\n', new AbortController().signal, 1)).resolves.toBe('stalled');
    expect(res.listenerCount('drain')).toBe(0);
  });
});

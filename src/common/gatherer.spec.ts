import { Gatherer } from './gatherer';

/** A send whose calls the test answers by hand, recording what each carried. */
function manualSend() {
  const calls: { inputs: number[]; answer: () => void; fail: (e: Error) => void }[] = [];
  const send = (inputs: number[]) =>
    new Promise<string[]>((resolve, reject) => {
      calls.push({ inputs, answer: () => resolve(inputs.map((i) => `#${i}`)), fail: reject });
    });
  return { calls, send };
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('Gatherer', () => {
  it('sends a lone input at the end of the turn it arrived in, by itself', async () => {
    const { calls, send } = manualSend();
    const g = new Gatherer(send, 10);
    const answer = g.call(1);
    expect(calls).toHaveLength(0);
    await turn();
    expect(calls.map((c) => c.inputs)).toEqual([[1]]);
    calls[0].answer();
    await expect(answer).resolves.toBe('#1');
  });

  it('sends what arrives in one turn as one call, answering each input with its own output', async () => {
    const { calls, send } = manualSend();
    const g = new Gatherer(send, 10);
    const answers = [g.call(1), g.call(2), g.call(3)];
    await turn();
    expect(calls.map((c) => c.inputs)).toEqual([[1, 2, 3]]);
    calls[0].answer();
    await expect(Promise.all(answers)).resolves.toEqual(['#1', '#2', '#3']);
  });

  it('sends what arrives in a later turn in a call of its own, without waiting for the earlier call to be answered', async () => {
    const { calls, send } = manualSend();
    const g = new Gatherer(send, 10);
    const first = g.call(1);
    await turn();
    const later = [g.call(2), g.call(3)];
    await turn();
    expect(calls.map((c) => c.inputs)).toEqual([[1], [2, 3]]);
    calls[1].answer();
    await expect(Promise.all(later)).resolves.toEqual(['#2', '#3']);
    calls[0].answer();
    await expect(first).resolves.toBe('#1');
  });

  it('never puts more than perCall inputs in one call', async () => {
    const { calls, send } = manualSend();
    const g = new Gatherer(send, 2);
    const answers = [1, 2, 3, 4, 5].map((i) => g.call(i));
    await turn();
    expect(calls.map((c) => c.inputs)).toEqual([[1, 2], [3, 4], [5]]);
    calls.forEach((c) => c.answer());
    await expect(Promise.all(answers)).resolves.toEqual(['#1', '#2', '#3', '#4', '#5']);
  });

  it('fails only the inputs of a call that fails, and sends the next call as usual', async () => {
    const { calls, send } = manualSend();
    const g = new Gatherer(send, 10);
    const failed = [g.call(1), g.call(2)];
    await turn();
    calls[0].fail(new Error('connection lost'));
    const next = g.call(3);
    await expect(failed[0]).rejects.toThrow('connection lost');
    await expect(failed[1]).rejects.toThrow('connection lost');
    await turn();
    expect(calls.map((c) => c.inputs)).toEqual([[1, 2], [3]]);
    calls[1].answer();
    await expect(next).resolves.toBe('#3');
  });

  it('fails the inputs of a call whose send throws instead of returning a promise', async () => {
    let throwing = true;
    const g = new Gatherer<number, number>(
      (inputs) => {
        if (throwing) throw new Error('no connection');
        return Promise.resolve(inputs.map((i) => i * 10));
      },
      10,
    );
    await expect(g.call(1)).rejects.toThrow('no connection');
    throwing = false;
    await expect(g.call(2)).resolves.toBe(20);
  });
});

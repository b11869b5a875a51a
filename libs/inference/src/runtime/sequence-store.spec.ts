import type * as ort from 'onnxruntime-node';
import { SEQUENCE_LOST_MESSAGE, SequenceStore } from './sequence-store';

const tensor = (label: string, elements = 1) => ({ label, type: 'float32', dims: [elements] }) as unknown as ort.Tensor;

describe('SequenceStore (what a worker holds between a sequence’s steps)', () => {
  it('starts a sequence empty, then hands each step what the previous one kept', () => {
    const store = new SequenceStore();
    expect(store.begin('a', 'decoder', true)).toEqual({});
    store.keep('a', 'decoder', { past: tensor('step 1') });
    expect(store.begin('a', 'decoder', false)).toEqual({ past: tensor('step 1') });
    // A first step again starts over, whatever was held.
    expect(store.begin('a', 'decoder', true)).toEqual({});
  });

  it('a later step of a sequence it does not hold fails with the lost-state message', () => {
    const store = new SequenceStore();
    expect(() => store.begin('never', 'decoder', false)).toThrow(SEQUENCE_LOST_MESSAGE);
    store.keep('a', 'decoder', {});
    store.end('a');
    expect(() => store.begin('a', 'decoder', false)).toThrow(/ended, idle too long, or evicted/);
    store.keep('b', 'decoder', {});
    expect(() => store.begin('b', 'encoder', false)).toThrow(/belongs to model decoder/);
  });

  it('drops sequences left idle (a call that died without ending its decoder)', () => {
    let now = 0;
    const store = new SequenceStore({ maxSequences: 10, maxBytes: 1e9, idleMs: 1000 }, () => now);
    store.keep('old', 'm', {});
    now = 600;
    store.keep('recent', 'm', {});
    now = 1200;
    expect(store.begin('recent', 'm', false)).toEqual({});
    expect(() => store.begin('old', 'm', false)).toThrow(SEQUENCE_LOST_MESSAGE);
    expect(store.size).toBe(1);
  });

  it('holds at most maxBytes of tensors, evicting the least recently used, and counts what ends', () => {
    const store = new SequenceStore({ maxSequences: 100, maxBytes: 1000, idleMs: 60_000 });
    store.keep('a', 'm', { past: tensor('a', 100) }); // 400 bytes
    store.keep('b', 'm', { past: tensor('b', 100) });
    expect(store.bytes).toBe(800);
    store.keep('c', 'm', { past: tensor('c', 100) }); // 1200 > 1000: a goes
    expect(store.bytes).toBe(800);
    expect(() => store.begin('a', 'm', false)).toThrow(SEQUENCE_LOST_MESSAGE);
    store.end('b');
    expect(store.bytes).toBe(400);
    // A lone sequence larger than the budget is kept: evicting the step's own state would help no one.
    store.keep('huge', 'm', { past: tensor('huge', 1000) });
    expect(store.size).toBe(1);
    expect(store.begin('huge', 'm', false)).toEqual({ past: tensor('huge', 1000) });
  });

  it('holds at most maxSequences, evicting the least recently used', () => {
    let now = 0;
    const store = new SequenceStore({ maxSequences: 2, maxBytes: 1e9, idleMs: 60_000 }, () => now++);
    store.keep('a', 'm', {});
    store.keep('b', 'm', {});
    store.keep('a', 'm', {}); // a used again: b is now the oldest
    store.keep('c', 'm', {});
    expect(store.size).toBe(2);
    expect(() => store.begin('b', 'm', false)).toThrow(SEQUENCE_LOST_MESSAGE);
    expect(store.begin('a', 'm', false)).toEqual({});
    expect(store.begin('c', 'm', false)).toEqual({});
  });
});

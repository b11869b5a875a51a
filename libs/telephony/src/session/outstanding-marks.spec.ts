import { OutstandingMarks } from './outstanding-marks';

describe('OutstandingMarks', () => {
  it('resolves echoes in send order as played', () => {
    const marks = new OutstandingMarks();
    marks.add('a');
    marks.add('b');
    expect(marks.names()).toEqual(['a', 'b']);
    expect(marks.resolve('a')).toMatchObject({ wasCleared: false, skippedMarks: 0 });
    expect(marks.resolve('b')).toMatchObject({ wasCleared: false, skippedMarks: 0 });
    expect(marks.size).toBe(0);
  });

  it('flags marks outstanding at a clear, but not marks sent after it', () => {
    const marks = new OutstandingMarks();
    marks.add('a');
    marks.add('b');
    expect(marks.markAllCleared()).toBe(2);
    marks.add('c');
    expect(marks.resolve('a')?.wasCleared).toBe(true);
    expect(marks.resolve('b')?.wasCleared).toBe(true);
    expect(marks.resolve('c')?.wasCleared).toBe(false);
  });

  it('returns null for a mark never sent or already echoed', () => {
    const marks = new OutstandingMarks();
    expect(marks.resolve('ghost')).toBeNull();
    marks.add('a');
    marks.resolve('a');
    expect(marks.resolve('a')).toBeNull();
  });

  it('resolves repeated names oldest first and counts marks skipped by an out-of-order echo', () => {
    const marks = new OutstandingMarks();
    marks.add('x');
    marks.add('y');
    marks.add('x');
    expect(marks.resolve('y')).toMatchObject({ wasCleared: false, skippedMarks: 1 });
    expect(marks.names()).toEqual(['x', 'x']);
    expect(marks.resolve('x')).toMatchObject({ wasCleared: false, skippedMarks: 0 });
    expect(marks.size).toBe(1);
  });
});

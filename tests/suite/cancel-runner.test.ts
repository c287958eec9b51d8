// How a worker's session hears that Vitest cancelled the run (framework/suite/cancel-runner.ts):
// the runner's cancel reaches every listener once, with why (Vitest's reasons in words, a caller's as given); a listener that comes after the cancel
// (a session still opening) hears it at once; a new run in the worker starts afresh. The real
// cancellation, a worker's jobs cancelled under --bail, is tests/run/not-run.test.ts's.
import { describe, expect, it } from 'vitest';
import type { CancelReason, SerializedConfig } from 'vitest';
import CancellableRunner, { onVitestCancel } from '../../framework/suite/cancel-runner.ts';

const config = { experimental: {} } as unknown as SerializedConfig;

describe('the test-type projects\' runner', () => {
  it('tells each listener once, with why; a late listener at once; a new run afresh; a stopped listener nothing', () => {
    const runner = new CancellableRunner(config);
    const heard: string[] = [];
    const stopped: string[] = [];
    const stop = onVitestCancel((why) => heard.push(why));
    onVitestCancel((why) => stopped.push(why))();
    runner.cancel('test-failure');
    runner.cancel('keyboard-input');
    expect(heard).toEqual(['Vitest cancelled the run: a test failed under --bail']);
    expect(stopped).toEqual([]);
    const late: string[] = [];
    onVitestCancel((why) => late.push(why));
    expect(late).toEqual(['Vitest cancelled the run: a test failed under --bail']);
    stop();

    const next = new CancellableRunner(config);
    const fresh: string[] = [];
    onVitestCancel((why) => fresh.push(why));
    expect(fresh).toEqual([]);
    next.cancel('SIGTERM received by disagg-bench run' as CancelReason);
    expect(fresh).toEqual(['SIGTERM received by disagg-bench run']);
    expect(heard).toHaveLength(1);
  });
});

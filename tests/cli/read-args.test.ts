// The one argument layer (runners/common/args): each style reads words as its upstream does, every
// refusal is one sentence naming the word, and --help is found only where it is an option. The
// gflags style's every form is walked by tests/xfer/benches/sweep-nixlbench-flags.test.ts.
import { describe, expect, it } from 'vitest';
import { asksForHelp, readArgs, type OptionSpec } from '../../runners/common/args/read-args.ts';
import { UsageError } from '../../runners/common/errors.ts';
import { takeOptions } from '../../runners/common/args/take-options.ts';

const options = { out: { type: 'string' }, seed: { type: 'string' }, fast: { type: 'boolean' } } as const satisfies OptionSpec;

/** The refusal's message, checked to be a UsageError of one line. */
function refusal(run: () => unknown): string {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(UsageError);
    expect((err as Error).message).not.toContain('\n');
    return (err as Error).message;
  }
  return expect.fail('not refused');
}

describe("the 'node' style (node's parseArgs)", () => {
  it('reads --name value, --name=value and booleans', () => {
    const { values } = readArgs(['--out', 'a.json', '--seed=7', '--fast'], { options });
    expect(values).toEqual({ out: 'a.json', seed: '7', fast: true });
  });

  it('refuses each fault in one sentence naming the word', () => {
    expect(refusal(() => readArgs(['--zz'], { options }))).toBe('unknown option "--zz"');
    expect(refusal(() => readArgs(['-q'], { options }))).toBe('unknown option "-q"');
    expect(refusal(() => readArgs(['--out'], { options }))).toBe('--out needs a value');
    expect(refusal(() => readArgs(['--out', '--fast'], { options }))).toMatch(/^--out needs a value, and the word after it is an option \(write --out=VALUE/);
    expect(refusal(() => readArgs(['--fast=yes'], { options }))).toBe('--fast takes no value');
    expect(refusal(() => readArgs(['extra'], { options }))).toBe('unexpected argument "extra": this command takes options only');
    // positionals where the spec takes them; a word after -- is one
    expect(readArgs(['a', '--', '--zz'], { options, positionals: true }).positionals).toEqual(['a', '--zz']);
  });

  it("names the option a refusal is about, and takes the command's own refusal of an unknown one", () => {
    let caught: unknown;
    try {
      readArgs(['--out'], { options });
    } catch (err) {
      caught = err;
    }
    expect((caught as UsageError).option).toBe('out');
    const mine = new UsageError('--zz is a flag of the other tool', 'zz');
    expect(() => readArgs(['--zz'], { options, unknown: (name) => (name === 'zz' ? mine : new UsageError('other')) })).toThrow(mine);
  });
});

describe("the 'click' style (kvbench)", () => {
  const spec = { options: { ...options, verify: { type: 'boolean' }, 'no-verify': { type: 'boolean' } }, style: 'click', positionals: true, switches: ['verify'] } as const;

  it('a value option takes the next word whatever it looks like', () => {
    expect(readArgs(['--seed', '-5', '--out', '--fast'], spec).values).toMatchObject({ seed: '-5', out: '--fast' });
    expect(readArgs(['--seed', '-5'], spec).values.fast).toBeUndefined();
  });

  it('--x/--no-x: off unless given, the last of the pair wins', () => {
    expect(readArgs(['cfg'], spec).values.verify).toBe(false);
    expect(readArgs(['--verify'], spec).values.verify).toBe(true);
    expect(readArgs(['--verify', '--no-verify'], spec).values.verify).toBe(false);
    expect(readArgs(['--no-verify', '--verify'], spec).values.verify).toBe(true);
    // a value that reads like the switch is a value, not the switch
    expect(readArgs(['--out', '--verify'], spec).values.verify).toBe(false);
  });
});

describe("the 'argparse' style (benchmark_serving)", () => {
  const spec = { options: { ...options, save: { type: 'string' } }, style: 'argparse', optionalValue: ['save'] } as const;

  it('takes the next word unless it is an option', () => {
    expect(readArgs(['--seed', '-5'], spec).values.seed).toBe('-5');
    expect(refusal(() => readArgs(['--seed', '--fast'], spec))).toMatch(/^--seed needs a value/);
    expect(refusal(() => readArgs(['--seed'], spec))).toBe('--seed needs a value');
  });

  it("nargs='?': the next word when it is not an option, else the option stands alone", () => {
    expect(readArgs(['--save', 'r.json'], spec)).toMatchObject({ values: { save: 'r.json' }, alone: new Set() });
    expect(readArgs(['--save=r.json'], spec).values.save).toBe('r.json');
    const bare = readArgs(['--save', '--fast'], spec);
    expect(bare.values).toEqual({ fast: true });
    expect([...bare.alone]).toEqual(['save']);
    expect([...readArgs(['--save'], spec).alone]).toEqual(['save']);
  });
});

describe('asksForHelp', () => {
  it('finds --help and -h anywhere among the options, before any fault of the line', () => {
    expect(asksForHelp(['--help'])).toBe(true);
    expect(asksForHelp(['-h'])).toBe(true);
    expect(asksForHelp(['--zz', 'extra', '--out', '-h'])).toBe(true);
    expect(asksForHelp(['--out', 'x'])).toBe(false);
    expect(asksForHelp(['--', '--help'])).toBe(false); // after --, every word is an argument
    expect(asksForHelp(['--helpful'])).toBe(false);
  });

  it("where a value may look like an option, a value is not a request for help", () => {
    expect(asksForHelp(['--out', '--help'], { style: 'click', options })).toBe(false);
    expect(asksForHelp(['--out=x', '--help'], { style: 'click', options })).toBe(true);
    expect(asksForHelp(['--fast', '--help'], { style: 'click', options })).toBe(true);
    expect(asksForHelp(['-out', '--help'], { style: 'gflags', options })).toBe(false);
    expect(asksForHelp(['--out', '-h'], { style: 'argparse', options })).toBe(false);
    expect(asksForHelp(['--out', '--help'], { style: 'argparse', options })).toBe(true);
  });

  it("gflags' own help flags in the gflags style", () => {
    for (const word of ['-help', '--help', '--helpfull', '-helpshort', '-h']) expect(asksForHelp([word], { style: 'gflags', options }), word).toBe(true);
    expect(asksForHelp(['-help'])).toBe(false);
  });
});

describe('takeOptions', () => {
  it("takes the named options out, values inline or next, and keeps the rest's order", () => {
    expect(takeOptions(['a', '--ranks', '4', 'b', '--ranks=2', '--x', '--ucx', 'v'], ['--ranks', '--ucx'])).toEqual({
      taken: [{ name: '--ranks', value: '4' }, { name: '--ranks', value: '2' }, { name: '--ucx', value: 'v' }],
      rest: ['a', 'b', '--x'],
    });
    expect(takeOptions(['--ranks'], ['--ranks']).taken).toEqual([{ name: '--ranks', value: undefined }]);
  });
});

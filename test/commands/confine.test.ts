// Where confine's own options end and the command's begin: splitArgs, before yargs parses.
import yargs from 'yargs/yargs';

import { builder, optionsTakingValue, splitArgs } from '../../src/commands/confine';

describe('confine: splitArgs', () => {
  it.each([
    [['ls', '-d', '/'], [], ['ls', '-d', '/']],
    [['python3', '-c', 'print(1)'], [], ['python3', '-c', 'print(1)']],
    [['-d', '/x', 'ls', '-d', '/'], ['-d', '/x'], ['ls', '-d', '/']],
    [['-w', '/a', '-w', '/b', '-r', '/c', 'cmd'], ['-w', '/a', '-w', '/b', '-r', '/c'], ['cmd']],
    [['--dir', '/x', '--write=/y', 'cmd', '--rm'], ['--dir', '/x', '--write=/y'], ['cmd', '--rm']],
    [['-v', '--rm', '--no-ignore', '-n', 'swe', 'claude'], ['-v', '--rm', '--no-ignore', '-n', 'swe'], ['claude']],
    [['-vd', '/x', 'cmd'], ['-vd', '/x'], ['cmd']],
    [['-d/x', 'cmd'], ['-d/x'], ['cmd']],
    [['-w', '-odd-path', 'cmd'], ['-w', '-odd-path'], ['cmd']],
    [['--', '-cmd', 'x'], [], ['-cmd', 'x']],
    [['-d', '/x', '--', 'ls', '--', '-d'], ['-d', '/x'], ['ls', '--', '-d']],
    [['--help'], ['--help'], []],
    [['-d', '/x'], ['-d', '/x'], []],
    [['-d'], ['-d'], []],
    [['--bogus', 'cmd'], ['--bogus'], ['cmd']],
    [['-', 'x'], [], ['-', 'x']],
  ])('%j -> own %j, command %j', (args, own, rest) => {
    expect(splitArgs(args)).toEqual({ own, rest });
  });

  it('knows the options other layers add to the builder (-e NAME takes a value)', () => {
    expect(splitArgs(['-e', 'API_KEY', 'cmd'])).toEqual({ own: ['-e', 'API_KEY'], rest: ['cmd'] });
  });

  it('reads which options take a value as yargs does, without making a yargs instance', () => {
    // What splitArgs read from a real yargs instance before (yargs' getOptions is not in its types).
    const options = (builder(yargs([])) as unknown as { getOptions(): Record<'string' | 'number' | 'array', string[]> & { narg: Record<string, number | null> } }).getOptions();
    const expected = new Set([...options.string, ...options.number, ...options.array]);
    for (const [key, n] of Object.entries(options.narg)) if (n) expected.add(key);
    expect([...optionsTakingValue()].sort()).toEqual([...expected].sort());
  });

  it('follows aliases, typed methods and nargs given to the builder in any form', () => {
    const names = optionsTakingValue((y) =>
      y
        .options({ out: { alias: ['o', 'output'], type: 'string' }, quiet: { alias: 'q', type: 'boolean' } })
        .number('jobs')
        .alias('jobs', 'j')
        .nargs('pair', 2)
        .boolean('dry-run'),
    );
    expect([...names].sort()).toEqual(['j', 'jobs', 'o', 'out', 'output', 'pair']);
  });
});

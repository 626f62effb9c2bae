// Where confine's own options end and the command's begin: splitArgs, before yargs parses.
import { splitArgs } from '../../src/commands/confine';

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
});

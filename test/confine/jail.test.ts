import { chooseJail, defaultJail, jailsFor } from '../../src/confine/jail';
import { parseMounts } from '../../src/confine/mounts';

describe('chooseJail', () => {
  it('defaults to landlock on Linux and seatbelt on macOS', () => {
    expect(defaultJail('linux')).toBe('landlock');
    expect(defaultJail('darwin')).toBe('seatbelt');
    expect(chooseJail(undefined, [], 'linux')).toBe('landlock');
    expect(jailsFor('linux')).toEqual(['landlock', 'bwrap', 'none']);
    expect(jailsFor('darwin')).toEqual(['seatbelt', 'none']);
  });

  it('refuses a jail the platform lacks, saying which it has', () => {
    expect(() => chooseJail('seatbelt', [], 'linux')).toThrow("--jail: unknown jail 'seatbelt' on Linux (seatbelt is macOS only): use one of landlock, bwrap, none");
    expect(() => chooseJail('bwrap', [], 'darwin')).toThrow(/bwrap is Linux only\): use one of seatbelt, none/);
    expect(() => chooseJail('docker', [], 'linux')).toThrow(/unknown jail 'docker' on Linux: use one of/);
  });

  it('takes --mount only with bwrap', () => {
    const mounts = parseMounts(['tmpfs:/x']);
    expect(chooseJail('bwrap', mounts, 'linux')).toBe('bwrap');
    expect(() => chooseJail(undefined, mounts, 'linux')).toThrow('--mount needs --jail bwrap: the landlock jail cannot mount anything (given: tmpfs:/x)');
    expect(() => chooseJail('none', mounts, 'linux')).toThrow(/the none jail cannot mount/);
  });
});

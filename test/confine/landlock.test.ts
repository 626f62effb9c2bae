// Landlock's rights per ABI, what a grant becomes, and the refusals: pure, checked against the
// kernel's UAPI values (include/uapi/linux/landlock.h).
import {
  FILE_RIGHTS,
  FS,
  NET,
  READ_RIGHTS,
  SCOPE,
  buildRuleset,
  fsRights,
  grantRights,
  netRights,
  readLandlockAbi,
  requireAbi,
  scopes,
} from '../../src/confine/landlock';
import { ArbError } from '../../src/errors';

describe('Landlock rights per ABI', () => {
  it('uses the kernel’s bit values', () => {
    expect(FS.EXECUTE).toBe(1n);
    expect(FS.MAKE_SYM).toBe(1n << 12n);
    expect(FS.REFER).toBe(1n << 13n);
    expect(FS.TRUNCATE).toBe(1n << 14n);
    expect(FS.IOCTL_DEV).toBe(1n << 15n);
    expect(FS.RESOLVE_UNIX).toBe(1n << 16n);
    expect(NET.CONNECT_TCP).toBe(2n);
    expect(SCOPE.ABSTRACT_UNIX_SOCKET).toBe(1n);
    expect(SCOPE.SIGNAL).toBe(2n);
  });

  it.each([
    [1, 0x1fffn],
    [2, 0x3fffn],
    [3, 0x7fffn],
    [4, 0x7fffn],
    [5, 0xffffn],
    [6, 0xffffn],
    [7, 0xffffn],
    [8, 0xffffn],
    [9, 0x1ffffn],
  ])('ABI %i handles every file-system right it knows (%s)', (abi, rights) => {
    expect(fsRights(abi)).toBe(rights);
  });

  it('network rights from ABI 4, scopes from ABI 6', () => {
    expect(netRights(3)).toBe(0n);
    expect(netRights(4)).toBe(NET.BIND_TCP | NET.CONNECT_TCP);
    expect(scopes(5)).toBe(0n);
    expect(scopes(6)).toBe(SCOPE.SIGNAL | SCOPE.ABSTRACT_UNIX_SOCKET);
    expect(scopes(7)).toBe(SCOPE.SIGNAL | SCOPE.ABSTRACT_UNIX_SOCKET);
  });
});

describe('grantRights', () => {
  const dir = { isDirectory: true };
  const file = { isDirectory: false };

  it('read: reading, running and listing; on a file only what a file can take', () => {
    expect(grantRights({ access: 'read', ...dir }, 7)).toBe(FS.EXECUTE | FS.READ_FILE | FS.READ_DIR);
    expect(grantRights({ access: 'read', ...file }, 7)).toBe(FS.EXECUTE | FS.READ_FILE);
    expect(READ_RIGHTS & (FS.WRITE_FILE | FS.REMOVE_FILE | FS.MAKE_REG)).toBe(0n);
  });

  it('list: listing only, and nothing on a file', () => {
    expect(grantRights({ access: 'list', ...dir }, 7)).toBe(FS.READ_DIR);
    expect(grantRights({ access: 'list', ...file }, 7)).toBe(0n);
  });

  it('write on a directory: every right the ABI knows', () => {
    expect(grantRights({ access: 'write', ...dir }, 7)).toBe(fsRights(7));
    expect(grantRights({ access: 'write', ...dir }, 2)).toBe(fsRights(2));
  });

  it('write on a file (a device): only file rights, else Landlock says EINVAL', () => {
    const r = grantRights({ access: 'write', ...file }, 7);
    expect(r).toBe(FS.EXECUTE | FS.WRITE_FILE | FS.READ_FILE | FS.TRUNCATE | FS.IOCTL_DEV);
    expect(r & ~FILE_RIGHTS).toBe(0n);
  });

  it('ABI 9: connecting to pathname sockets only where the grant says so', () => {
    expect(grantRights({ access: 'write', ...dir }, 9) & FS.RESOLVE_UNIX).toBe(0n);
    expect(grantRights({ access: 'write', sockets: true, ...dir }, 9) & FS.RESOLVE_UNIX).toBe(FS.RESOLVE_UNIX);
    expect(grantRights({ access: 'write', sockets: true, ...dir }, 7) & FS.RESOLVE_UNIX).toBe(0n);
  });

  it('never grants a right the ruleset does not handle', () => {
    for (let abi = 1; abi <= 9; abi++) {
      for (const access of ['list', 'read', 'write'] as const) {
        for (const isDirectory of [true, false]) {
          const r = grantRights({ access, isDirectory, sockets: true }, abi);
          expect(r & ~fsRights(abi)).toBe(0n);
        }
      }
    }
  });
});

describe('buildRuleset', () => {
  it('one rule per path with the union of its grants; every known right handled; scoped at ABI 6+', () => {
    const rs = buildRuleset(
      [
        { path: '/', access: 'list', isDirectory: true, why: '' },
        { path: '/tmp', access: 'read', isDirectory: true, why: '' },
        { path: '/tmp', access: 'write', isDirectory: true, why: '' },
        { path: '/dev/null', access: 'write', isDirectory: false, why: '' },
      ],
      7,
    );
    expect(rs.handledAccessFs).toBe(fsRights(7));
    expect(rs.scoped).toBe(SCOPE.SIGNAL | SCOPE.ABSTRACT_UNIX_SOCKET);
    expect(rs.handledAccessNet).toBe(0n);
    expect(rs.rules).toEqual([
      { path: '/', access: FS.READ_DIR },
      { path: '/tmp', access: fsRights(7) },
      { path: '/dev/null', access: FS.EXECUTE | FS.WRITE_FILE | FS.READ_FILE | FS.TRUNCATE | FS.IOCTL_DEV },
    ]);
  });

  it('--no-network handles TCP where the ABI knows it', () => {
    expect(buildRuleset([], 7, { denyNetwork: true }).handledAccessNet).toBe(NET.BIND_TCP | NET.CONNECT_TCP);
    expect(buildRuleset([], 3, { denyNetwork: true }).handledAccessNet).toBe(0n);
    expect(buildRuleset([], 5).scoped).toBe(0n);
  });
});

describe('refusing to run unconfined', () => {
  function refusal(answer: number): ArbError {
    try {
      requireAbi(answer);
    } catch (err) {
      return err as ArbError;
    }
    throw new Error(`requireAbi(${answer}) did not refuse`);
  }

  it('no Landlock (ENOSYS): says what kernel is needed', () => {
    const e = refusal(-38);
    expect(e.code).toBe('ARB_UNSUPPORTED');
    expect(e.message).toMatch(/no Landlock/);
    expect(e.hint).toMatch(/Linux 5\.19 or later.*CONFIG_SECURITY_LANDLOCK/);
  });

  it('Landlock turned off (EOPNOTSUPP): says how to turn it on', () => {
    expect(refusal(-95).hint).toMatch(/lsm=/);
  });

  it('ABI 1 (and 0) is too old', () => {
    expect(refusal(1).message).toMatch(/ABI 1\) is too old: confine needs ABI 2 \(Linux 5\.19\)/);
    expect(refusal(0).message).toMatch(/too old/);
    expect(refusal(-1).message).toMatch(/cannot ask the kernel/);
  });

  it('ABI 2 and later run', () => {
    expect(requireAbi(2)).toBe(2);
    expect(requireAbi(7)).toBe(7);
  });

  it('ARB_TEST_LANDLOCK_ABI can only force a refusal, never choose a weaker ABI that runs', () => {
    const kernel = () => 7;
    expect(readLandlockAbi(kernel, {})).toBe(7);
    expect(readLandlockAbi(kernel, { ARB_TEST_LANDLOCK_ABI: '3' })).toBe(7);
    expect(readLandlockAbi(kernel, { ARB_TEST_LANDLOCK_ABI: '2' })).toBe(7);
    expect(() => readLandlockAbi(kernel, { ARB_TEST_LANDLOCK_ABI: '1' })).toThrow(/too old/);
    expect(() => readLandlockAbi(kernel, { ARB_TEST_LANDLOCK_ABI: 'ENOSYS' })).toThrow(/no Landlock/);
  });
});

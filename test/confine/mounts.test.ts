import { ArbError } from '../../src/errors';
import { checkMountSources, escapeSpecPath, mountArgs, parseMount, parseMounts, splitSpec } from '../../src/confine/mounts';

function refusal(spec: string): string {
  try {
    parseMount(spec);
  } catch (err) {
    expect(err).toBeInstanceOf(ArbError);
    expect((err as ArbError).code).toBe('ARB_USAGE');
    expect((err as ArbError).exitCode).toBe(2);
    return (err as ArbError).message;
  }
  throw new Error(`'${spec}' was accepted`);
}

describe('parseMount', () => {
  it('takes TYPE:DEST, with the source defaulting to DEST for ro and rw', () => {
    expect(parseMount('ro:/opt/tools')).toEqual({ type: 'ro', source: '/opt/tools', dest: '/opt/tools', spec: 'ro:/opt/tools' });
    expect(parseMount('rw:/data')).toMatchObject({ type: 'rw', source: '/data', dest: '/data' });
    expect(parseMount('tmpfs:/tmp')).toEqual({ type: 'tmpfs', dest: '/tmp', spec: 'tmpfs:/tmp' });
    expect(parseMount('dev:/dev')).toMatchObject({ type: 'dev', dest: '/dev' });
    expect(parseMount('proc:/proc')).toMatchObject({ type: 'proc', dest: '/proc' });
  });

  it('takes TYPE:SRC:DEST for ro and rw', () => {
    expect(parseMount('rw:/home/user/data:/data')).toMatchObject({ type: 'rw', source: '/home/user/data', dest: '/data' });
    expect(parseMount('ro:/srv/x:/x')).toMatchObject({ type: 'ro', source: '/srv/x', dest: '/x' });
  });

  it('keeps spaces in paths as they are', () => {
    expect(parseMount('rw:/my data/x y:/in jail')).toMatchObject({ source: '/my data/x y', dest: '/in jail' });
  });

  it("reads '\\:' as a colon inside a path and '\\\\' as a backslash", () => {
    expect(parseMount('ro:/mnt/a\\:b:/data')).toMatchObject({ source: '/mnt/a:b', dest: '/data' });
    expect(parseMount('ro:/c\\:d')).toMatchObject({ source: '/c:d', dest: '/c:d' });
    expect(parseMount('tmpfs:/x\\\\')).toMatchObject({ dest: '/x\\' });
    expect(parseMount('ro:/a\\\\:/b')).toMatchObject({ source: '/a\\', dest: '/b' });
    // A backslash before anything else is kept.
    expect(parseMount('ro:/a\\b')).toMatchObject({ dest: '/a\\b' });
  });

  it('normalizes paths (.., //, a trailing /)', () => {
    expect(parseMount('rw:/a//b/../c/:/d/')).toMatchObject({ source: '/a/c', dest: '/d' });
    expect(parseMount('tmpfs:/')).toMatchObject({ dest: '/' });
  });

  it('refuses an unknown type, naming the known ones', () => {
    expect(refusal('bind:/a:/b')).toBe("--mount 'bind:/a:/b': unknown mount type 'bind': use one of ro, rw, tmpfs, dev, proc");
    expect(refusal('RO:/a')).toMatch(/unknown mount type 'RO'/);
    expect(refusal('/a/b')).toMatch(/unknown mount type '\/a\/b' \(the form is TYPE:DEST or TYPE:SRC:DEST\)/);
  });

  it('refuses too few parts', () => {
    expect(refusal('ro')).toBe("--mount 'ro': too few parts: the form is ro:DEST or ro:SRC:DEST");
    expect(refusal('tmpfs')).toBe("--mount 'tmpfs': too few parts: the form is tmpfs:DEST");
  });

  it('refuses too many parts', () => {
    expect(refusal('rw:/a:/b:/c')).toMatch(/^--mount 'rw:\/a:\/b:\/c': too many parts \(4\): the form is rw:DEST or rw:SRC:DEST/);
    expect(refusal('rw:/a:b:/c')).toMatch(/too many parts/);
  });

  it('refuses a source given to tmpfs, dev or proc', () => {
    expect(refusal('tmpfs:/x:/tmp')).toMatch(/^--mount 'tmpfs:\/x:\/tmp': tmpfs takes no source, only a destination: the form is tmpfs:DEST/);
    expect(refusal('dev:/dev:/dev')).toMatch(/dev takes no source/);
    expect(refusal('proc:/proc:/proc')).toMatch(/proc takes no source/);
  });

  it('refuses relative and empty paths, naming which', () => {
    expect(refusal('rw:data:/data')).toBe("--mount 'rw:data:/data': the source path 'data' is relative: give an absolute path (starting with /)");
    expect(refusal('rw:/src:data')).toMatch(/the destination path 'data' is relative/);
    expect(refusal('tmpfs:tmp')).toMatch(/the destination path 'tmp' is relative/);
    expect(refusal('ro:./x')).toMatch(/'\.\/x' is relative/);
    expect(refusal('ro:~/x')).toMatch(/'~\/x' is relative/);
    expect(refusal('ro:')).toMatch(/the destination path is empty/);
    expect(refusal('rw::/d')).toMatch(/the source path is empty/);
  });

  it('parses a list in the order given', () => {
    expect(parseMounts(['tmpfs:/a', 'ro:/b']).map((m) => m.dest)).toEqual(['/a', '/b']);
    expect(parseMounts(undefined)).toEqual([]);
  });
});

describe('escapeSpecPath', () => {
  it('gives back any path whole through splitSpec', () => {
    for (const p of ['/plain', '/a:b', '/a\\b', '/a\\:b', '/end\\', '/x::y\\\\z', '/sp ace:']) {
      expect(splitSpec(`ro:${escapeSpecPath(p)}:${escapeSpecPath(p)}`)).toEqual(['ro', p, p]);
    }
  });
});

describe('checkMountSources', () => {
  it('refuses a source that does not exist, and accepts one that does', () => {
    expect(() => checkMountSources(parseMounts(['rw:/', 'tmpfs:/nowhere/at/all']))).not.toThrow();
    expect(() => checkMountSources(parseMounts(['ro:/nonexistent-arb-test:/x']))).toThrow(
      "--mount 'ro:/nonexistent-arb-test:/x': the source '/nonexistent-arb-test' does not exist",
    );
    // TYPE:DEST binds DEST from the host, so DEST must exist there.
    expect(() => checkMountSources(parseMounts(['ro:/nonexistent-arb-test']))).toThrow(/the source '\/nonexistent-arb-test' does not exist/);
  });
});

describe('mountArgs', () => {
  it('maps each type to its bwrap option', () => {
    expect(mountArgs(parseMount('ro:/a:/b'))).toEqual(['--ro-bind', '/a', '/b']);
    expect(mountArgs(parseMount('rw:/a'))).toEqual(['--bind', '/a', '/a']);
    expect(mountArgs(parseMount('tmpfs:/t'))).toEqual(['--tmpfs', '/t']);
    expect(mountArgs(parseMount('dev:/dev'))).toEqual(['--dev', '/dev']);
    expect(mountArgs(parseMount('proc:/proc'))).toEqual(['--proc', '/proc']);
    expect(mountArgs(parseMount('rw:/my dir/a\\:b:/x y'))).toEqual(['--bind', '/my dir/a:b', '/x y']);
  });
});

// The visible form of a patch on a terminal: control characters shown, not sent, whatever the
// chunks the patch is read in.
import { VisibleContent } from '../../src/diff/terminal';
import { quoteC, quoteHeader } from '../../src/diff/patch';

const SAMPLE = Buffer.concat([
  Buffer.from('+ok\ttab\r\n+erase\x1b[2K\x07bell\rover\n'),
  Buffer.from('+c1 \u009b2J bidi \u202eevil\u202c lrm\u200e alm\u061c é 😀\n', 'utf8'),
  Buffer.from([0x2b, 0xc2, 0x41, 0xe2, 0x80, 0x41, 0xff, 0x0a]), // cut sequences, a lone byte
]);
const WANT =
  '+ok\ttab\r\n+erase\\x1b[2K\\x07bell\\x0dover\n' +
  '+c1 \\u{9b}2J bidi \\u{202e}evil\\u{202c} lrm\\u{200e} alm\\u{61c} é 😀\n';

function whole(chunks: Buffer[]): Buffer {
  const v = new VisibleContent();
  return Buffer.concat([...chunks.map((c) => v.push(c)), v.end()]);
}

test('control characters, C1 and bidi controls are shown; tabs, CRLF and text pass', () => {
  const out = whole([SAMPLE]);
  expect(out.subarray(0, Buffer.byteLength(WANT)).toString('utf8')).toBe(WANT);
  expect(out.subarray(Buffer.byteLength(WANT))).toEqual(Buffer.from([0x2b, 0xc2, 0x41, 0xe2, 0x80, 0x41, 0xff, 0x0a]));
});

test('the same whatever the chunks', () => {
  const once = whole([SAMPLE]);
  for (let i = 0; i <= SAMPLE.length; i++) {
    expect(whole([SAMPLE.subarray(0, i), SAMPLE.subarray(i)])).toEqual(once);
  }
  expect(whole([...SAMPLE].map((b) => Buffer.from([b])))).toEqual(once);
});

test('a CR at the very end is shown', () => {
  expect(whole([Buffer.from('x\r')]).toString()).toBe('x\\x0d');
});

describe('quoteHeader', () => {
  const names = new Set(['x ', 'd /m', 'd /new', 'plain', 'a b', 'a b b/c']);
  test('names with a space are quoted, others left as git prints them', () => {
    expect(quoteHeader('diff --git a/x  b/x ', names)).toBe('diff --git "a/x " "b/x "');
    expect(quoteHeader('diff --git a/d /m b/d /new', names)).toBe('diff --git "a/d /m" "b/d /new"');
    expect(quoteHeader('diff --git a/plain b/plain', names)).toBe('diff --git a/plain b/plain');
  });
  test('splits where both halves are paths of the patch', () => {
    expect(quoteHeader('diff --git a/a b b/c b/a b b/c', names)).toBe('diff --git "a/a b b/c" "b/a b b/c"');
  });
  test('quotes as git does', () => {
    expect(quoteC('a"b\\c\nd\te\x01\x7f\xff')).toBe('"a\\"b\\\\c\\nd\\te\\001\\177\xff"');
  });
});

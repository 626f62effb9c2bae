// A patch shown on a terminal. The patch holds the fork's files as they are, and a confined
// command chose them: a line can erase itself as it is drawn (ESC [2K), set the clipboard
// (OSC 52), retitle the window or hide text behind bidirectional overrides. On a terminal those
// are shown, not sent: each as \xHH (C0 controls, DEL; a CR before a newline and tabs stay) or
// \u{H} (C1 controls, bidi marks and overrides, as UTF-8 encodes them). Piped, the patch goes out
// byte for byte, as git apply takes it.

/** UTF-8 sequences of the characters shown as \u{H}: C1 controls and bidi controls. */
function codeAt(buf: Buffer, i: number): { code: number; length: number } | 'partial' | undefined {
  const b0 = buf[i];
  if (b0 === 0xc2 || b0 === 0xd8) {
    if (i + 1 >= buf.length) return 'partial';
    const b1 = buf[i + 1];
    if (b0 === 0xc2 && b1 >= 0x80 && b1 <= 0x9f) return { code: b1, length: 2 };
    if (b0 === 0xd8 && b1 === 0x9c) return { code: 0x61c, length: 2 };
    return undefined;
  }
  if (b0 === 0xe2) {
    if (i + 2 >= buf.length) return i + 1 < buf.length && buf[i + 1] !== 0x80 && buf[i + 1] !== 0x81 ? undefined : 'partial';
    const b1 = buf[i + 1];
    const b2 = buf[i + 2];
    const code = ((b0 & 0x0f) << 12) | ((b1 & 0x3f) << 6) | (b2 & 0x3f);
    if ((b1 & 0xc0) !== 0x80 || (b2 & 0xc0) !== 0x80) return undefined;
    if (code === 0x200e || code === 0x200f || (code >= 0x202a && code <= 0x202e) || (code >= 0x2066 && code <= 0x2069)) return { code, length: 3 };
  }
  return undefined;
}

/** Turns a patch's bytes, chunk by chunk, into what a terminal may be sent. */
export class VisibleContent {
  private carry: Buffer = Buffer.alloc(0);

  /** The visible form of `chunk`; a sequence cut at its end waits for the next chunk. */
  push(chunk: Buffer, last = false): Buffer {
    const buf = this.carry.length ? Buffer.concat([this.carry, chunk]) : chunk;
    this.carry = Buffer.alloc(0);
    const out: Buffer[] = [];
    let from = 0;
    const escape = (i: number, length: number, text: string) => {
      if (i > from) out.push(buf.subarray(from, i));
      out.push(Buffer.from(text));
      from = i + length;
    };
    for (let i = 0; i < buf.length; i++) {
      const c = buf[i];
      if (c < 0x20 || c === 0x7f) {
        if (c === 0x09 || c === 0x0a) continue;
        if (c === 0x0d) {
          if (i + 1 >= buf.length && !last) {
            this.carry = buf.subarray(i);
            return this.flush(out, buf, from, i);
          }
          if (buf[i + 1] === 0x0a) continue;
        }
        escape(i, 1, `\\x${c.toString(16).padStart(2, '0')}`);
        continue;
      }
      if (c < 0xc2) continue;
      const seq = codeAt(buf, i);
      if (seq === 'partial') {
        if (last) continue;
        this.carry = buf.subarray(i);
        return this.flush(out, buf, from, i);
      }
      if (seq) {
        escape(i, seq.length, `\\u{${seq.code.toString(16)}}`);
        i += seq.length - 1;
      }
    }
    return this.flush(out, buf, from, buf.length);
  }

  private flush(out: Buffer[], buf: Buffer, from: number, to: number): Buffer {
    if (to > from) out.push(buf.subarray(from, to));
    // Copied: the carry may still point into this chunk's memory, which the caller reuses.
    this.carry = Buffer.from(this.carry);
    return Buffer.concat(out);
  }

  /** What is left at the end. */
  end(): Buffer {
    return this.push(Buffer.alloc(0), true);
  }
}

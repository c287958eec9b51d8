// The sender's view of the receiver's transfer buffer as a ring: `head` (bytes ever written) and
// `tail` (bytes the receiver has freed, learnt from its acknowledgements) grow for ever; positions
// are taken modulo the size. An object never straddles the end (the rest of the ring is skipped),
// and nothing is placed over bytes the receiver has not freed: head - tail <= size, always.
import { XferError } from '../../errors.ts';

export interface Placement {
  /** Ring offset of each object, in order. */
  positions: number[];
  /** `head` after these objects (what the receiver acknowledges to free them). */
  endHead: number;
}

export class RingBuffer {
  private head = 0;
  private tail = 0;

  constructor(readonly size: number) {
    if (!(size > 0)) throw new XferError(`ring size must be positive, got ${size}`);
  }

  /** Where `count` objects of `objectBytes` would go now, or undefined when they do not fit yet. */
  place(objectBytes: number, count: number): Placement | undefined {
    if (objectBytes > this.size) throw new XferError(`an object of ${objectBytes} bytes cannot fit a ${this.size}-byte buffer`);
    let h = this.head;
    const positions: number[] = [];
    for (let i = 0; i < count; i++) {
      let pos = h % this.size;
      if (pos + objectBytes > this.size) {
        h += this.size - pos; // skip the end: objects stay contiguous
        pos = 0;
      }
      positions.push(pos);
      h += objectBytes;
    }
    return h - this.tail <= this.size ? { positions, endHead: h } : undefined;
  }

  /** Records that objects up to `endHead` were written. */
  commit(endHead: number): void {
    if (endHead - this.tail > this.size) throw new XferError(`ring overrun: head ${endHead} - tail ${this.tail} > ${this.size}`);
    this.head = endHead;
  }

  /** The receiver freed everything before `tail`. */
  release(tail: number): void {
    if (tail > this.head || tail < this.tail) throw new XferError(`ring: acknowledged tail ${tail} outside [${this.tail}, ${this.head}]`);
    this.tail = tail;
  }

  get empty(): boolean {
    return this.head === this.tail;
  }

  /** With nothing unread, starts the next objects at offset 0 (a batch that fits the buffer then fits). */
  rewind(): void {
    if (!this.empty) throw new XferError('ring: cannot rewind with unread data');
    this.head = this.tail = Math.ceil(this.head / this.size) * this.size;
  }

  /** Test hook: forget what the receiver has not freed (to show that the receiver catches overwrites). */
  forgetUnread(): void {
    this.tail = this.head;
  }
}

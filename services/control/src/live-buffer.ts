/**
 * A subscriber's bounded queue of pending live events: when a client reads slower than calls
 * arrive, the oldest pending ones are dropped (a live view wants the newest) and counted, so the
 * client can be told how many it missed. With `timeOf`, "oldest" means the oldest by that time
 * (the route passes receivedAt, which is how the page orders and trims its list; calls reach the
 * consumer out of that order across partitions); without it, the first to arrive. Items are handed
 * over in arrival order either way: the page places each by its time. Pure; the route drains it as
 * the socket accepts writes.
 */
export class LiveBuffer<T> {
  private items: T[] = [];
  /** timeOf of each item, computed once on push (only read when the buffer is full). */
  private times: number[] = [];
  private droppedSinceTake = 0;

  constructor(readonly capacity: number, private readonly timeOf?: (item: T) => number) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError('capacity must be a positive integer');
  }

  get size(): number { return this.items.length; }

  push(item: T): void {
    this.items.push(item);
    this.times.push(this.timeOf ? this.timeOf(item) : 0);
    if (this.items.length > this.capacity) {
      const oldest = this.oldestIndex();
      this.items.splice(oldest, 1);
      this.times.splice(oldest, 1);
      this.droppedSinceTake += 1;
    }
  }

  /** Everything pending, in arrival order, and how many were dropped since the last take. */
  take(): { items: T[]; dropped: number } {
    const taken = { items: this.items, dropped: this.droppedSinceTake };
    this.items = [];
    this.times = [];
    this.droppedSinceTake = 0;
    return taken;
  }

  /** The smallest time, the first to arrive among equals (always 0 without timeOf). */
  private oldestIndex(): number {
    let oldest = 0;
    for (let i = 1; i < this.times.length; i++) if (this.times[i]! < this.times[oldest]!) oldest = i;
    return oldest;
  }
}

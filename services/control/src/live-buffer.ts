/**
 * A subscriber's bounded queue of pending live events: when a client reads slower than calls
 * arrive, the oldest pending ones are dropped (a live view wants the newest) and counted, so the
 * client can be told how many it missed. Pure; the route drains it as the socket accepts writes.
 */
export class LiveBuffer<T> {
  private items: T[] = [];
  private droppedSinceTake = 0;

  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError('capacity must be a positive integer');
  }

  get size(): number { return this.items.length; }

  push(item: T): void {
    this.items.push(item);
    if (this.items.length > this.capacity) {
      this.items.splice(0, this.items.length - this.capacity);
      this.droppedSinceTake += 1;
    }
  }

  /** Everything pending, oldest first, and how many were dropped since the last take. */
  take(): { items: T[]; dropped: number } {
    const taken = { items: this.items, dropped: this.droppedSinceTake };
    this.items = [];
    this.droppedSinceTake = 0;
    return taken;
  }
}

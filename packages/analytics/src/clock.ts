/**
 * Time as the client sees it: stamps, the flush timer, retry pauses and request timeouts all go
 * through one Clock, so tests can drive every one of them with a fake clock.
 */
export interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): Timer;
}

export interface Timer {
  cancel(): void;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout(fn, ms) {
    const handle = setTimeout(fn, ms);
    return { cancel: () => clearTimeout(handle) };
  },
};

export function sleep(clock: Clock, ms: number): Promise<void> {
  return new Promise((resolve) => void clock.setTimeout(resolve, ms));
}

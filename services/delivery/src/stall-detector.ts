/** A request in flight to a destination, as StallDetector counts it. */
export interface RequestMark { readonly at: number }

interface Progress {
  /** Requests in flight, oldest first (a Set keeps insertion order, and requests start in clock order). */
  inFlight: Set<RequestMark>;
  /** When the last of its requests finished. */
  lastFinishedAt: number | undefined;
  /** Moving average of how long its requests took (ms). */
  latencyMs: number | undefined;
  /** confirm() found it stalled, and none of its requests has finished since. */
  confirmed: boolean;
}

export interface StallDetectorOptions {
  /** The least wait that makes a destination hung: a fast destination's GC pause or a burst is not a hang. */
  floorMs: number;
  /** The most: what a destination with slow answers may take before its overflow goes to the retry tier. */
  ceilingMs: number;
  /** How many of its usual request times a destination may go without finishing a request. */
  factor: number;
}

const DEFAULTS: StallDetectorOptions = { floorMs: 150, ceilingMs: 500, factor: 4 };
/** Weight of the newest request in the moving average. */
const ALPHA = 0.1;
/** Destinations remembered while idle (their average latency); past this the idle ones are forgotten. */
const MAX_REMEMBERED = 10_000;

/**
 * Tells a hung destination from a busy one. A destination is stalled when none of its requests has
 * finished for `factor` times its usual request time (within floor and ceiling), counted from its
 * last finished request or, if none finished since, from its oldest request in flight. A busy
 * destination finishes requests all the time however slow each is; a hung one finishes none. The
 * simpler rule, oldest request waiting over 500 ms, holds every partition shared with a newly hung
 * destination for 600 ms, and takes a slow destination whose oldest request waited on a starved
 * event loop for a hung one.
 */
export class StallDetector {
  private readonly destinations = new Map<string, Progress>();
  private readonly opts: StallDetectorOptions;

  constructor(opts: Partial<StallDetectorOptions> = {}) {
    this.opts = { ...DEFAULTS, ...opts };
  }

  /** A request to the destination starts; pass the mark to finished(). */
  started(destinationId: string, at: number): RequestMark {
    let p = this.destinations.get(destinationId);
    if (!p) {
      if (this.destinations.size >= MAX_REMEMBERED) this.forgetIdle();
      this.destinations.set(destinationId, (p = { inFlight: new Set(), lastFinishedAt: undefined, latencyMs: undefined, confirmed: false }));
    }
    const mark = { at };
    p.inFlight.add(mark);
    return mark;
  }

  finished(destinationId: string, mark: RequestMark, at: number): void {
    const p = this.destinations.get(destinationId);
    if (!p || !p.inFlight.delete(mark)) return;
    const took = Math.max(0, at - mark.at);
    p.latencyMs = p.latencyMs === undefined ? took : p.latencyMs + ALPHA * (took - p.latencyMs);
    p.lastFinishedAt = at;
    p.confirmed = false;
  }

  /** How long the destination may go without finishing a request before it counts as stalled. */
  thresholdMs(destinationId: string): number {
    const latency = this.destinations.get(destinationId)?.latencyMs;
    const { floorMs, ceilingMs, factor } = this.opts;
    return latency === undefined ? floorMs : Math.min(ceilingMs, Math.max(floorMs, factor * latency));
  }

  stalled(destinationId: string, now: number): boolean {
    const p = this.destinations.get(destinationId);
    const oldest = p?.inFlight.values().next().value;
    if (!p || !oldest) return false;
    const since = p.lastFinishedAt !== undefined && p.lastFinishedAt > oldest.at ? p.lastFinishedAt : oldest.at;
    return now - since > this.thresholdMs(destinationId);
  }

  /**
   * Looks whether the destination is stalled, and remembers a yes until one of its requests
   * finishes. Call it only once the event loop has read the I/O waiting for it: after a blocked
   * loop (a long GC pause, a starved process) every destination seems to have finished nothing for
   * as long as the loop was blocked, while their answers wait to be read.
   */
  confirm(destinationId: string, now: number): boolean {
    const p = this.destinations.get(destinationId);
    if (!p) return false;
    return (p.confirmed = this.stalled(destinationId, now));
  }

  /** Whether confirm() found the destination stalled and none of its requests has finished since. */
  confirmedStalled(destinationId: string): boolean {
    return this.destinations.get(destinationId)?.confirmed === true;
  }

  private forgetIdle(): void {
    for (const [id, p] of this.destinations) if (p.inFlight.size === 0) this.destinations.delete(id);
  }
}

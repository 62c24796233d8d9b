// Types of feed.js (plain JavaScript served to the browser as is) for its Node unit tests.
export interface SseMessage { event: string; data: string; id: string | undefined }
export declare class SseParser {
  constructor(onEvent: (e: SseMessage) => void);
  push(chunk: string): void;
}
export interface LiveCall {
  messageId: string; type: string; name: string | null; userId: string | null; anonymousId: string | null;
  timestamp: string; receivedAt: string; call: Record<string, unknown>;
}
export interface Filter { type: string; name: string; user: string }
export declare function matchesFilter(call: LiveCall, filter: Filter): boolean;
export declare function insertByReceivedAt<T extends { receivedAt: string }>(list: T[], item: T, max: number): { index: number; removed: T[] };
export declare const FINAL_STATES: Set<string>;
export declare function traceIsFinal(trace: { destinations: Array<{ state: string }> } | null): boolean;
export declare function userLabel(call: Pick<LiveCall, 'userId' | 'anonymousId'>): string;
export declare function hasAttemptSince(trace: { destinations: Array<{ attempts: Array<{ at: string }> }> } | null, since: string): boolean;

// The webhook body of the bench's delivery tasks (a track call of user `user-<i mod 997>`), shared
// by the tasks written straight to the delivery topic and the bare undici client that posts the
// same bodies, so the two rows compare like with like.

/** The user key of the i-th task. */
export const benchUserKey = (i: number): string => `user-${i % 997}`;

/** The JSON body of the i-th task. */
export function benchWebhookBody(messageId: string, i: number, timestamp: string): string {
  return JSON.stringify({
    version: 1, type: 'track', messageId, userId: benchUserKey(i), event: 'Order Completed',
    properties: { orderId: `o-${i}`, revenue: 42.5, currency: 'EUR' }, context: { library: { name: 'switchyard-bench' } }, timestamp,
  });
}

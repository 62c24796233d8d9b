import { randomBytes } from 'node:crypto';

/** Identifiers: a readable kind prefix and 80 random bits. */
export const newSourceId = () => `src_${randomBytes(10).toString('hex')}`;
export const newDestinationId = () => `dst_${randomBytes(10).toString('hex')}`;
/** Write keys are credentials: 256 random bits, URL-safe (they travel as HTTP Basic user names). */
export const newWriteKey = () => randomBytes(32).toString('base64url');

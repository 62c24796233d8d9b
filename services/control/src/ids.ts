import { randomBytes } from 'node:crypto';

/** Identifiers: a readable kind prefix and 80 random bits. */
export const newSourceId = () => `src_${randomBytes(10).toString('hex')}`;
export const newDestinationId = () => `dst_${randomBytes(10).toString('hex')}`;
/**
 * Write keys are credentials: 256 random bits, URL-safe (they travel as HTTP Basic user names).
 * The `wk_` prefix keeps a key from starting with `-` (base64url can), which command-line
 * parsers take for an option, and lets secret scanners recognise it.
 */
export const newWriteKey = () => `wk_${randomBytes(32).toString('base64url')}`;
export const newReplayId = () => `rpl_${randomBytes(10).toString('hex')}`;
export const newTokenId = () => `tok_${randomBytes(10).toString('hex')}`;
export const newNotificationEndpointId = () => `nep_${randomBytes(10).toString('hex')}`;
/** Admin API tokens: 256 random bits, URL-safe; `syt_` lets secret scanners recognise one (and keeps it from starting with `-`). */
export const newAdminToken = () => `syt_${randomBytes(32).toString('base64url')}`;

// Sent as context.library of every batch. version.test.ts keeps it equal to package.json (dist/
// cannot import ../package.json: it is outside rootDir).
export const LIBRARY_NAME = '@switchyard/analytics';
export const LIBRARY_VERSION = '0.1.0';

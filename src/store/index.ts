// src/store: episode files and job files in an S3-compatible store (docs/deployment.md, A results store).
export * from './keys.ts';
export * from './manifest.ts';
export { ResultsStore, type StoredObject } from './s3.ts';
export { downloadAttempt, holdsManifest, downloadJobFiles, readAttemptFile, filesUnder, readManifest, uploadAttempt, uploadJobFiles, UPLOADS_AT_ONCE, type AttemptIds } from './episode-files.ts';
export { openStore, storeAt } from './open.ts';

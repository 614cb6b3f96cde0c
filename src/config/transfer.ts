/** The largest chunk a host hands out of a folder's archive per call: well under Temporal's payload limit. */
export const HOST_ARCHIVE_CHUNK_MAX = 1024 * 1024;

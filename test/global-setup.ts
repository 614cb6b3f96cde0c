// Filled in by the server module: starts (or reuses) the shared embedded Temporal dev server.
export default async function setup(): Promise<void> {}

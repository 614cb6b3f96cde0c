// The client's side of moving files (docs/deployment.md, Moving files): written once in src/config/transfer.ts, which
// workers use too.
export { fetchHostFolder, type HostFolder } from '../config/transfer.ts';

// Sandbox slots kept in the cluster itself (docs/kubernetes.md, Sandbox queues on Kubernetes): a provider whose
// sandboxes every worker reaches (a Kubernetes cluster) keeps its slots where every worker sees them, one record per
// numbered slot, so taking slot N is one create that only one worker can win. The activities give the records meaning
// (src/host/cluster-slots.ts); the store only keeps them.

/** One taken slot: its number, who holds it (a slot key), the holder's data (opaque JSON) and the version a change must match. */
export interface SlotRecord {
  slot: number;
  holder: string;
  data: string;
  version: string;
}

export interface SlotStore {
  /** Where the slots live, for status and logs (e.g. `Leases in namespace ns, label berth.slots=…`). */
  readonly where: string;
  /** The most slots the configuration allows ([kubernetes].max_pods). */
  readonly maxSlots: number;
  /** Where that bound comes from (the file and key, or the default). */
  readonly maxFrom: string;
  list(): Promise<SlotRecord[]>;
  /** Takes slot `slot` for `holder`: the record made (its version for the next change), or undefined when it is taken already. */
  create(slot: number, holder: string, data: string): Promise<SlotRecord | undefined>;
  /** Changes a record unless it changed since it was read (then undefined): the record as changed. */
  update(record: SlotRecord, holder: string, data: string): Promise<SlotRecord | undefined>;
  /** Gives a slot back; one already gone is fine. False when it changed since it was read (a newer holder's: read again). */
  remove(record: SlotRecord): Promise<boolean>;
  /**
   * How many sandboxes a quota on the namespace still leaves room for, counting the sandboxes of Berth already
   * running as room (its hard pod count less the pods that are not Berth's), or undefined when no quota bounds pods.
   */
  quotaRoom(): Promise<{ room: number; quota: string } | undefined>;
}

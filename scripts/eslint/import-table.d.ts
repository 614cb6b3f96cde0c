// Types of import-table.js for the tests that read its table (test/lint/design-table.unit.test.ts).
export const IMPORT_TABLE: Record<string, string[]>;
export const importTableRule: unknown;
declare const plugin: { rules: Record<string, unknown> };
export default plugin;

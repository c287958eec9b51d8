// Types of scripts/fresh-machine-check.mjs (plain JavaScript: a fresh clone runs it with node alone).
export declare const PACKAGE_OF_BACKEND: Readonly<Record<string, string>>;
export declare function backendsOf(configDir: string): Map<string, string | undefined>;
export declare function checkRun(runDir: string, configDir: string): { ok: boolean; what: string }[];

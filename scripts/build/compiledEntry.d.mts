export declare const repoRoot: string;
export declare const compiledDir: string;
export declare const stampFile: string;
export declare const sourceRoots: readonly string[];
export declare function compiledEntry(source: string): { path: string; reason?: undefined } | { path?: undefined; reason: string };

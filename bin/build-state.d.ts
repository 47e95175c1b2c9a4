// Types for bin/build-state.js, which stays JavaScript: the launcher runs it before any TypeScript
// can be loaded.
export declare const ROOT: string;
export declare const STAMP: string;
export type BuildState = 'current' | 'stale' | 'missing';
export declare function buildState(root?: string): BuildState;

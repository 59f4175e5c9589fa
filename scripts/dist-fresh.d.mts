/** What dist/ is made from: a change to any of these since the last build means building again. */
export declare const BUILD_INPUTS: string[];
/** True when every build output exists and the oldest of them is newer than the newest input. */
export declare function distIsFresh(root?: string): boolean;

/** The files of src/ that may read process.env (see environment-readers.mjs). */
export declare const ENVIRONMENT_READERS: readonly string[];

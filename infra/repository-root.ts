import { resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** The route table's handler paths are relative to this directory. */
export const repositoryRoot = resolve(fileURLToPath(new URL(".", import.meta.url)), "..");

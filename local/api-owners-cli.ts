import { writePathOwners } from "#infra/api-path-owners";

// `npm run api:owners`: after adding or removing routes, records which stack owns each new path
// resource (infra/api-path-owners.json); test/unit/platform/api-path-owners.test.ts fails until it is.
const owners = writePathOwners();
process.stdout.write(`infra/api-path-owners.json: ${owners.size} paths\n`);

import { describeRouteFuzz } from "#test/fuzz/route-fuzz-suite";

// Half of the route table (every other route) and half of the requests: test/fuzz/route-fuzz-suite.ts.
describeRouteFuzz(0, 2);

/**
 * The one file of prices and of the tenant mix `npm run bench:cost` bills (docs/performance.md,
 * "Monthly cost"). Prices: AWS list prices, us-east-1, on-demand, without free tiers, as published
 * on each service's pricing page in November 2026; change them here and nowhere else.
 */
export const prices = {
  /** API Gateway REST API, per million calls (first 333 million a month). */
  apiGatewayPerMillionCalls: 3.5,
  /** Lambda on ARM64: per million requests, per GB-second. */
  lambdaPerMillionRequests: 0.2,
  lambdaArmPerGbSecond: 0.0000133334,
  /** DynamoDB on-demand: per million write request units, per million read request units. */
  dynamodbPerMillionWru: 0.625,
  dynamodbPerMillionRru: 0.125,
  /** CloudWatch Logs ingestion per GB: Standard and Infrequent Access log classes; each event adds 26 bytes. */
  logsStandardPerGb: 0.5,
  logsInfrequentAccessPerGb: 0.25,
  logEventOverheadBytes: 26,
  /** X-Ray: per million traces recorded. */
  xrayPerMillionTraces: 5,
  /** SQS standard queues per million requests (a send, a receive and a delete per message); EventBridge custom events per million. */
  sqsPerMillionRequests: 0.4,
  eventBridgePerMillionEvents: 1,
  /**
   * Amazon Location's routes matrix per 1,000 elements (origin × destination pairs): the figure an operator
   * declares as the provider's `pricePer1000Elements` (docs/operations.md, "Road-engine spend"); an assumption,
   * check the service's pricing page for the region and the travel mode.
   */
  amazonLocationPer1000Elements: 0.5,
} as const;

/** The documented tenant mix (docs/performance.md): 20 tenants × 200,000 calls a day, 30-day months. */
export const tenantMix = {
  tenants: 20,
  callsPerTenantPerDay: 200_000,
  daysPerMonth: 30,
  /** Shares of the calls: single reads, writes, list pages. */
  share: { get: 0.7, write: 0.25, list: 0.05 },
  /** Routing runs a month in all, and what one costs the run worker (its memory, its optimizer budget plus loading and storing). */
  runsPerMonth: 4_800,
  runWorkerMemoryMb: 1_769,
  runWorkerSecondsPerRun: 32,
  /** Webhook deliveries per run (one subscription per tenant, one `run.finished` event). */
  webhookDeliveriesPerRun: 1,
  /** The tenant authorizer runs once per token and cache TTL (300 s): calls per authorizer invocation. */
  callsPerAuthorizerInvocation: 50,
  /** What one DynamoDB call adds to a function's billed time on AWS (single-digit ms in-region). */
  dynamodbCallMs: 6,
  /** The scheduler tick: one invocation a minute. */
  tickInvocationsPerMonth: 43_200,
  /** X-Ray sampling of the API stage before and after this round (reservoir per second, rate beyond it). */
  xraySamplingBefore: { reservoirPerSecond: 1, rate: 0.05 },
  xraySamplingAfter: { reservoirPerSecond: 1, rate: 0.01 },
  /**
   * Road-network travel: every tenant plans one hub with an Amazon Location provider; each day's first run
   * meets `newPointShare` new addresses (the day's other runs re-plan the same points: all from the cache),
   * and a hub's first run ever asks the whole matrix. Points: visits plus the vehicles' start and end.
   */
  roadEngine: { pointsPerRun: 300, newPointShare: 0.1, newDayRunsPerTenantPerMonth: 30 },
} as const;

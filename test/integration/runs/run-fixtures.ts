import { ALWAYS_ON_SHIFT } from "#test/support/shifts";
import { BatchWriteCommand } from "@aws-sdk/lib-dynamodb";
import {
  DeleteMessageBatchCommand,
  DeleteMessageCommand,
  type Message,
  ReceiveMessageCommand,
  SendMessageCommand,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import type { ScheduledEvent, SQSBatchResponse, SQSEvent } from "aws-lambda";
import { handler as runWorker } from "#functions/jobs/routing-run";
import { handler as tick } from "#functions/jobs/scheduler-tick";
import { configurationService } from "#shared/app/configurations";
import { hubService } from "#shared/app/hubs";
import { scheduleService } from "#shared/app/schedules";
import { vehicleService } from "#shared/app/vehicles";
import { visitService } from "#shared/app/visits";
import type { Caller } from "#shared/domain/caller";
import { configurationInputSchema } from "#shared/domain/configurations/schema";
import { hubInputSchema } from "#shared/domain/hubs/schema";
import { newId } from "#shared/domain/ids";
import { vehicleInputSchema } from "#shared/domain/vehicles/schema";
import { type Visit, visitInputSchema } from "#shared/domain/visits/schema";
import { formatDateTimeUtc } from "#shared/domain/time";
import { documentClient, tableName } from "#shared/store/dynamo";
import { keys } from "#shared/store/keys";
import { dynamoScheduleStore } from "#shared/store/schedule-store";
import { newOrganizationId } from "#test/support/local-api";

/** Builders for run tests: a hub with vehicles, visits and a profile, made through the real services. */
export const callerOf = (organizationId = newOrganizationId()): Caller => ({
  userId: "u",
  organizationId,
  hubIds: [],
  permissions: new Set(),
  permissionDetails: [],
});

export const tickAt = (time: Date) => tick({ time: time.toISOString() } as ScheduledEvent);

export async function seedHub(owner: Caller, options: { vehicles?: number; visits?: number; profile?: Record<string, unknown> } = {}) {
  const hub = await hubService.create(owner, hubInputSchema.parse({ name: "Depot", address: "Jl. Depot 1", lat: -6.2, lng: 106.8 }));
  const vehicles = [];
  for (let i = 0; i < (options.vehicles ?? 2); i++) {
    vehicles.push(
      await vehicleService.create(owner, vehicleInputSchema.parse({ name: `Van ${i + 1}`, hubId: hub._id, workingTime: ALWAYS_ON_SHIFT })),
    );
  }
  const visits: Visit[] = [];
  for (let i = 0; i < (options.visits ?? 4); i++) {
    visits.push(
      await visitService.create(
        owner,
        visitInputSchema.parse({
          hubId: hub._id,
          name: `Stop ${i + 1}`,
          coordinate: { lat: -6.2 + 0.01 * (i + 1), lng: 106.8 + 0.005 * i },
        }),
      ),
    );
  }
  const profile = await configurationService.create(
    owner,
    configurationInputSchema.parse({ name: "Daily plan", hubId: hub._id, timeLimitSeconds: 1, ...options.profile }),
  );
  return { hub, vehicles, visits, profile };
}

/**
 * Writes `count` active visits straight into the table (same item shape as the visit store, without
 * the hub's reference count), with strictly increasing creation ids: fast enough for thousands.
 */
export async function bulkActiveVisits(organizationId: string, hubId: string, count: number, startMs: number): Promise<string[]> {
  const ids: string[] = [];
  const items = Array.from({ length: count }, (_, i) => {
    const created = new Date(startMs + i * 1000);
    const id = newId(created);
    ids.push(id);
    const visit: Visit = {
      _id: id,
      hubId,
      name: `Bulk ${i}`,
      address: null,
      coordinate: { lat: -6.2 + ((i % 50) - 25) * 0.002, lng: 106.8 + (Math.floor(i / 50) - 20) * 0.002 },
      timeWindows: [],
      visitTime: 1,
      capacity: {},
      tags: [],
      status: "UNASSIGNED",
      priority: 3,
      pickupVisitId: null,
      assignedVehicleId: null,
      routingResultId: null,
      routePlannedOrder: null,
      eta: null,
      etd: null,
      attempts: 0,
      failureReason: null,
      lastTransition: null,
      requirements: { photo: false, signature: false, notes: false },
      proofs: [],
      organizationId,
      createdTime: formatDateTimeUtc(created),
      updatedTime: formatDateTimeUtc(created),
    };
    return {
      ...keys.visit(organizationId, hubId, id),
      ...visit,
      entity: "visit",
      version: 1,
      GSI1PK: keys.activeVisits(organizationId, hubId),
      GSI1SK: id,
      GSI2PK: keys.visitsOfOrganization(organizationId),
      GSI2SK: `${keys.visitPrefix}${id}`,
    };
  });
  for (let i = 0; i < items.length; i += 25) {
    let requests: unknown[] | undefined = items.slice(i, i + 25).map((Item) => ({ PutRequest: { Item } }));
    while (requests && requests.length > 0) {
      const output: { UnprocessedItems?: Record<string, unknown[]> } = await documentClient().send(
        new BatchWriteCommand({ RequestItems: { [tableName()]: requests as never } }),
      );
      requests = output.UnprocessedItems?.[tableName()];
    }
  }
  return ids;
}

export function dailySchedule(configurationId: string, overrides: Record<string, unknown> = {}) {
  return {
    name: "Morning run",
    configurationId,
    periode: "daily" as const,
    schedules: [{ time: ["07:00"] }],
    startTime: "2020-01-01 00:00",
    endTime: "2099-12-31 23:59",
    frequency: null,
    interval: null,
    autoDispatch: false,
    active: true,
    ...overrides,
  };
}

export async function createDueSchedule(owner: Caller, configurationId: string, overrides: Record<string, unknown> = {}) {
  const schedule = await scheduleService.create(owner, dailySchedule(configurationId, overrides));
  const dueAt = (await dynamoScheduleStore.find(owner.organizationId, schedule._id))?.schedule.nextRunAt as string;
  return { schedule, dueAt, afterDue: new Date(new Date(dueAt).getTime() + 20_000) };
}

export async function storedSchedule(organizationId: string, scheduleId: string) {
  return (await dynamoScheduleStore.find(organizationId, scheduleId))?.schedule;
}

/** Receives what is in the queue now (not deleted: delivery decides), with the receive count. */
export async function receive(sqs: SQSClient, queueUrl: string, waitSeconds = 0): Promise<Message[]> {
  const received = await sqs.send(
    new ReceiveMessageCommand({
      QueueUrl: queueUrl,
      MaxNumberOfMessages: 10,
      WaitTimeSeconds: waitSeconds,
      MessageSystemAttributeNames: ["All"],
      AttributeNames: ["All"],
    }),
  );
  return [...new Map((received.Messages ?? []).map((message) => [message.MessageId, message])).values()];
}

/**
 * Short receives until a message is visible (a long poll of the local queue can count one message's
 * receive twice, which would skew ApproximateReceiveCount). Gives up after ~10 s.
 */
export async function receiveWhenVisible(sqs: SQSClient, queueUrl: string): Promise<Message[]> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const messages = await receive(sqs, queueUrl);
    if (messages.length > 0) return messages;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return [];
}

export function sqsEvent(messages: Message[]): SQSEvent {
  return {
    Records: messages.map((message) => ({
      messageId: message.MessageId as string,
      receiptHandle: message.ReceiptHandle as string,
      body: message.Body ?? "",
      attributes: (message.Attributes ?? {}) as unknown as SQSEvent["Records"][number]["attributes"],
      messageAttributes: {},
      md5OfBody: message.MD5OfBody ?? "",
      eventSource: "aws:sqs",
      eventSourceARN: "arn:aws:sqs:us-east-1:000000000000:isolated",
      awsRegion: "us-east-1",
    })),
  };
}

/** What the SQS event source mapping does: deletes the messages the handler did not report as failed. */
export async function acknowledge(sqs: SQSClient, queueUrl: string, messages: Message[], response: SQSBatchResponse): Promise<void> {
  const failed = new Set(response.batchItemFailures.map((failure) => failure.itemIdentifier));
  const done = messages.filter((message) => !failed.has(message.MessageId as string));
  if (done.length === 0) return;
  await sqs.send(
    new DeleteMessageBatchCommand({
      QueueUrl: queueUrl,
      Entries: done.map((message, i) => ({ Id: String(i), ReceiptHandle: message.ReceiptHandle as string })),
    }),
  );
}

/**
 * Hands a message this test does not own back to the shared queue with a fresh receive count.
 * Several test files consume the local stack's one run queue at once, and every receive counts
 * toward the redrive policy's maxReceiveCount (SQS increments ApproximateReceiveCount on each
 * receive and moves the message to the dead-letter queue after maxReceiveCount of them: AWS SQS
 * Developer Guide, "Using dead-letter queues in Amazon SQS"). Making a foreign message visible again
 * would spend its owner's receives, so it is deleted and sent again with the same body.
 */
export async function handBack(sqs: SQSClient, queueUrl: string, message: Message): Promise<void> {
  await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: message.Body as string }));
  await sqs.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: message.ReceiptHandle as string }));
}

/**
 * Delivers these results' queued runs to the run worker, `deliveries` times each (more than one is
 * a redelivery), then acknowledges them; hands every other message back (see handBack). Gives up
 * after `waitMilliseconds`.
 */
export async function deliverQueuedRuns(
  sqs: SQSClient,
  queueUrl: string,
  resultIds: string[],
  options: { deliveries?: number; waitMilliseconds?: number } = {},
): Promise<void> {
  const waiting = new Set(resultIds);
  const deadline = Date.now() + (options.waitMilliseconds ?? 30_000);
  while (waiting.size > 0 && Date.now() < deadline) {
    const mine: Message[] = [];
    for (const message of await receive(sqs, queueUrl)) {
      if (waiting.delete(JSON.parse(message.Body as string).resultId)) mine.push(message);
      else await handBack(sqs, queueUrl, message);
    }
    if (mine.length === 0) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      continue;
    }
    let response = await runWorker(sqsEvent(mine));
    for (let again = 1; again < (options.deliveries ?? 1); again++) response = await runWorker(sqsEvent(mine));
    await acknowledge(sqs, queueUrl, mine, response);
  }
  if (waiting.size > 0) throw new Error(`no run message for results ${[...waiting].join(", ")}`);
}

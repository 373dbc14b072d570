import { randomBytes } from "node:crypto";
import { DeleteMessageCommand, ReceiveMessageCommand, type SQSClient } from "@aws-sdk/client-sqs";
import type { SQSEvent } from "aws-lambda";
import { selfSignedCertificate } from "#test/fixtures/app-integrations/self-signed-certificate";
import { ALWAYS_ON_SHIFT } from "#test/support/shifts";
import { jsonClient } from "./fuzz-client.ts";
import { buildMultipart } from "./multipart-body.ts";

/**
 * One resource of every kind in an organization, made through the API, so generated requests can
 * name ids that exist and reach the write paths instead of stopping at 404. The fuzzer deletes and
 * renames them as it goes: `ensure` re-reads a fixture after a successful write that named it and
 * recreates it when it is gone.
 */
export type FixtureName =
  | "hubId"
  | "vehicleId"
  | "visitId"
  | "configurationId"
  | "scheduleId"
  | "resultId"
  | "dataTypeId"
  | "dataTypeName"
  | "dataId"
  | "appIntegrationId"
  | "webhookId"
  | "webhookUrl";

export const certificatePem = selfSignedCertificate("Fuzz SSO").pem;
export const azureAuthUrl = "https://login.microsoftonline.com/0f1e2d3c-fuzz/saml2";
/** A URL webhook subscriptions and external-api types accept (https, a public name; names are not resolved when saved). */
export const fuzzWebhookUrl = "https://hooks.example.com/fuzz";

/** The fuzz data type: one field of most kinds, so record bodies reach every value rule. */
export const fuzzDataType = (name: string) => ({
  name,
  fields: [
    { type: "title", title: "Name" },
    { id: "email", title: "Email", type: "text", required: false, unique: true, searchable: true },
    { id: "age", title: "Age", type: "number", required: false, validations: { min: 0, max: 150, decimals: 2 } },
    { id: "segment", title: "Segment", type: "option", required: true, optionData: ["retail", "wholesale"] },
    { id: "tags", title: "Tags", type: "multiOption", required: false, optionData: ["a", "b", "c"] },
    { id: "vip", title: "VIP", type: "boolean", required: false },
    { id: "since", title: "Since", type: "date", required: false },
    { id: "seen", title: "Seen", type: "dateTime", required: false },
    { id: "phone", title: "Phone", type: "phoneNumber", required: false },
    { id: "location", title: "Location", type: "geolocation", required: false },
    { id: "open", title: "Open", type: "time", required: false },
  ],
  uniqueTogether: [["tags", "vip"]],
});

/** JSON Schema of the fuzz type's record values, for the generic generator (record bodies accept any key). */
export const fuzzRecordValueSchemas = {
  email: { type: "string", maxLength: 40 },
  age: { type: "number", minimum: 0, maximum: 150 },
  segment: { enum: ["retail", "wholesale"] },
  tags: { type: "array", items: { enum: ["a", "b", "c"] }, maxItems: 3 },
  vip: { type: "boolean" },
  since: { type: "string", pattern: "^20[0-9]{2}-(0[1-9]|1[0-2])-(0[1-9]|1[0-9]|2[0-8])$" },
  seen: { type: "string", pattern: "^20[0-9]{2}-0[1-9]-1[0-9] [01][0-9]:[0-5][0-9]:[0-5][0-9]$" },
  phone: { type: "string", pattern: "^\\+62[0-9]{8,11}$" },
  location: {
    anyOf: [
      {
        type: "object",
        properties: { lat: { type: "number", minimum: -90, maximum: 90 }, lng: { type: "number", minimum: -180, maximum: 180 } },
        required: ["lat", "lng"],
      },
      { type: "string", pattern: "^-?[0-9]{1,2}\\.[0-9]{1,4},-?1[0-7][0-9]\\.[0-9]{1,4}$" },
    ],
  },
  open: { type: "string", pattern: "^([01][0-9]|2[0-3]):[0-5][0-9]$" },
} as const;

const unique = () => randomBytes(4).toString("hex");

export interface FixtureSetOptions {
  baseUrl: string;
  token: string;
  /** The run queue, to turn the on-demand routing result into a `done` one (dispatch needs it). */
  sqs: SQSClient;
  queueUrl: string;
  /** Runs one routing-run message in process (the worker handler). */
  runWorker: (event: SQSEvent) => Promise<unknown>;
}

export class FixtureSet {
  private readonly ids = new Map<FixtureName, string>();
  private readonly api;

  constructor(private readonly options: FixtureSetOptions) {
    this.api = jsonClient(options.baseUrl, options.token);
  }

  id(name: string): string {
    const value = this.ids.get(name as FixtureName);
    if (value === undefined) throw new Error(`no fixture named ${name}`);
    return value;
  }

  /** Creates one of everything; the routing result is run to `done` so it can be dispatched. */
  async create(): Promise<void> {
    await this.createHub();
    await this.createVehicle();
    await this.createVisit();
    await this.createConfiguration();
    await this.createSchedule();
    await this.createResult();
    await this.createDataType();
    await this.createRecord();
    await this.createAppIntegration();
    await this.createWebhook();
  }

  /** Re-reads the named fixtures and recreates those that are gone (in dependency order). */
  async ensure(names: ReadonlyArray<string>): Promise<void> {
    const wanted = new Set(names);
    if (wanted.has("hubId") && !(await this.exists(`/hub/${this.id("hubId")}`))) await this.createHub();
    if (wanted.has("vehicleId") && !(await this.exists(`/vehicle/${this.id("vehicleId")}`))) await this.createVehicle();
    if (wanted.has("visitId") && !(await this.exists(`/visit/${this.id("visitId")}`))) await this.createVisit();
    if (wanted.has("configurationId") && !(await this.exists(`/routing/configuration/${this.id("configurationId")}`)))
      await this.createConfiguration();
    if (wanted.has("scheduleId") && !(await this.exists(`/routing/schedule/${this.id("scheduleId")}`))) await this.createSchedule();
    if (wanted.has("dataTypeId") || wanted.has("dataTypeName") || wanted.has("dataId")) {
      const type = await this.api.call("GET", `/data-type/${this.id("dataTypeId")}`);
      if (type.status === 200) this.ids.set("dataTypeName", (type.json as { data_type: { name: string } }).data_type.name);
      else await this.createDataType();
      if (!(await this.exists(`/data/type/${encodeURIComponent(this.id("dataTypeName"))}/${encodeURIComponent(this.id("dataId"))}`))) {
        await this.createRecord().catch(async () => {
          // The fuzzer may have reshaped the type so the fixture record no longer fits: start a fresh type.
          await this.createDataType();
          await this.createRecord();
        });
      }
    }
    if (wanted.has("appIntegrationId") && !(await this.exists(`/app-integration/${this.id("appIntegrationId")}`)))
      await this.createAppIntegration();
    if (wanted.has("webhookId") && !(await this.exists(`/webhook/${this.id("webhookId")}`))) await this.createWebhook();
  }

  private async exists(path: string): Promise<boolean> {
    return (await this.api.call("GET", path)).status === 200;
  }

  private async createHub() {
    const body = await this.api.expect("POST", "/hub", 201, { name: `Fuzz hub ${unique()}`, address: "Jl. Fuzz 1", lat: -6.2, lng: 106.8 });
    this.ids.set("hubId", body.data._id);
  }

  private async createVehicle() {
    const body = await this.api.expect("POST", "/vehicle", 201, {
      name: `Van ${unique()}`,
      hubId: this.id("hubId"),
      workingTime: ALWAYS_ON_SHIFT,
    });
    this.ids.set("vehicleId", body.data._id);
  }

  private async createVisit() {
    const body = await this.api.expect("POST", "/visit", 201, {
      hubId: this.id("hubId"),
      name: `Stop ${unique()}`,
      coordinate: { lat: -6.21, lng: 106.81 },
    });
    this.ids.set("visitId", body.data._id);
  }

  private async createConfiguration() {
    const body = await this.api.expect("POST", "/routing/configuration", 201, {
      name: `Plan ${unique()}`,
      hubId: this.id("hubId"),
      vehicleIds: [this.id("vehicleId")],
      timeLimitSeconds: 1,
    });
    this.ids.set("configurationId", body.data._id);
  }

  private async createSchedule() {
    const body = await this.api.expect("POST", "/routing/schedule", 201, {
      name: `Schedule ${unique()}`,
      configurationId: this.id("configurationId"),
      periode: "weekly",
      schedules: [{ day: "monday", time: ["07:00"] }],
      startTime: "2026-01-01 00:00",
      endTime: "2030-12-31 23:59",
    });
    this.ids.set("scheduleId", body.data._id);
  }

  private async createResult() {
    const body = await this.api.expect("POST", "/routing/result", 201, { configurationId: this.id("configurationId"), name: "Fuzz run" });
    const resultId = body.data._id as string;
    this.ids.set("resultId", resultId);
    const { sqs, queueUrl } = this.options;
    for (let attempt = 0; attempt < 5; attempt++) {
      const received = await sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 1, WaitTimeSeconds: 1 }));
      const message = received.Messages?.[0];
      if (!message?.Body?.includes(resultId)) continue;
      await this.options.runWorker({
        Records: [
          {
            messageId: message.MessageId as string,
            receiptHandle: message.ReceiptHandle as string,
            body: message.Body,
            attributes: { ApproximateReceiveCount: "1" },
            messageAttributes: {},
            md5OfBody: "",
            eventSource: "aws:sqs",
            eventSourceARN: "arn:aws:sqs:local:000000000000:runs",
            awsRegion: "us-east-1",
          },
        ],
      } as unknown as SQSEvent);
      await sqs.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: message.ReceiptHandle as string }));
      return;
    }
    throw new Error("the fixture routing run's message never arrived");
  }

  private async createDataType() {
    const body = await this.api.expect("POST", "/data-type", 201, fuzzDataType(`Fuzz type ${unique()}`));
    this.ids.set("dataTypeId", body.data_type._id);
    this.ids.set("dataTypeName", body.data_type.name);
  }

  private async createRecord() {
    const dataId = `Fuzz record ${unique()}`;
    await this.api.expect("POST", "/data", 201, {
      dataTypeId: this.id("dataTypeId"),
      hubId: this.id("hubId"),
      dataId,
      segment: "retail",
      age: 30,
    });
    this.ids.set("dataId", dataId);
  }

  /** A subscription to a public https URL (never delivered to here: the fuzz stack runs no publisher). */
  private async createWebhook() {
    this.ids.set("webhookUrl", fuzzWebhookUrl);
    const body = await this.api.expect("POST", "/webhook", 201, {
      url: fuzzWebhookUrl,
      events: ["routing.result.completed"],
      description: `Fuzz hook ${unique()}`,
    });
    this.ids.set("webhookId", body.data._id);
  }

  private async createAppIntegration() {
    const { body, contentType } = buildMultipart({
      boundary: `fuzz${unique()}`,
      parts: [
        { name: "integrationType", value: "azure" },
        { name: "azureAuthUrl", value: azureAuthUrl },
        { name: "azureCert", value: certificatePem, filename: "sso.pem", contentType: "application/x-pem-file" },
      ],
    });
    const created = await fetch(`${this.options.baseUrl}/app-integration`, {
      method: "POST",
      headers: { authorization: `Bearer ${this.options.token}`, "content-type": contentType },
      body,
    });
    const text = await created.text();
    if (created.status !== 201) throw new Error(`fixture POST /app-integration answered ${created.status}: ${text.slice(0, 500)}`);
    this.ids.set("appIntegrationId", JSON.parse(text).data._id);
  }
}

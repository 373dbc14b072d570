import { describe, expect, it } from "vitest";
import { type ApiClient, type ApiResponse, newTenant } from "#test/support/local-api";
import { refusal } from "#test/support/refusals";
import { schedulingTenant } from "#test/support/scheduling-fixtures";
import { selfSignedCertificate } from "#test/fixtures/app-integrations/self-signed-certificate";
import { scheduleBody, validWeeklySchedule } from "#test/unit/schedules/fixtures";

/**
 * ETag / If-Match over HTTP, for every versioned resource: each kind creates one resource and says
 * how to change it (PATCH body, and a PUT body when the resource has PUT).
 */
interface Subject {
  path: string;
  /** A PATCH body; each writer number gives a different value. */
  patch: (writer: number) => Record<string, unknown>;
  /** The value the PATCH bodies set, read from an answer's body. */
  valueOf: (body: any) => unknown;
  /** A PUT body that sets the value to "Replaced" (resources with PUT). */
  replace?: Record<string, unknown>;
}

const named = (path: string, replace?: Record<string, unknown>): Subject => ({
  path,
  patch: (writer) => ({ name: `Writer ${writer}` }),
  valueOf: (body) => body.data.name,
  ...(replace ? { replace } : {}),
});

async function created(response: Promise<ApiResponse>): Promise<Record<string, any>> {
  const answer = await response;
  expect(answer.status, JSON.stringify(answer.body)).toBe(201);
  return answer.body.data;
}

const customerType = {
  name: "Customer",
  fields: [
    { type: "title", title: "Name" },
    { id: "segment", title: "Segment", type: "option", required: true, optionData: ["retail", "wholesale"] },
    { id: "note", title: "Note", type: "text", required: false },
  ],
};

const hubBody = { name: "Depot", address: "Main St 1", lat: -6.2, lng: 106.8, timeZone: null };

async function tenantWithHub() {
  const tenant = newTenant();
  const hub = await created(tenant.api.post("/hub", hubBody));
  return { ...tenant, hubId: hub._id as string };
}

const kinds: Array<[string, () => Promise<{ api: ApiClient; subject: Subject }>]> = [
  [
    "hub",
    async () => {
      const { api, hubId } = await tenantWithHub();
      return { api, subject: named(`/hub/${hubId}`, { ...hubBody, name: "Replaced" }) };
    },
  ],
  [
    "vehicle",
    async () => {
      const { api, hubId } = await tenantWithHub();
      const vehicle = await created(api.post("/vehicle", { name: "Van", hubId }));
      return { api, subject: named(`/vehicle/${vehicle._id}`, { name: "Replaced", hubId }) };
    },
  ],
  [
    "visit",
    async () => {
      const { api, hubId } = await tenantWithHub();
      const visit = await created(
        api.post("/visit", { name: "Shop", address: "Side St 2", coordinate: { lat: -6.19, lng: 106.82 }, hubId }),
      );
      return { api, subject: named(`/visit/${visit._id}`) };
    },
  ],
  [
    "routing configuration",
    async () => {
      const { api, hubId } = await tenantWithHub();
      const profile = await created(api.post("/routing/configuration", { name: "Daily", hubId }));
      return { api, subject: named(`/routing/configuration/${profile._id}`, { name: "Replaced", hubId }) };
    },
  ],
  [
    "routing schedule",
    async () => {
      const { api, profile } = await schedulingTenant();
      const schedule = await created(api.post("/routing/schedule", scheduleBody({ configurationId: profile })));
      return {
        api,
        subject: named(`/routing/schedule/${schedule._id}`, { ...validWeeklySchedule, configurationId: profile, name: "Replaced" }),
      };
    },
  ],
  [
    "data type",
    async () => {
      const { api } = newTenant();
      const answer = await api.post("/data-type", customerType);
      expect(answer.status, JSON.stringify(answer.body)).toBe(201);
      const id = answer.body.data_type._id;
      return {
        api,
        subject: {
          path: `/data-type/${id}`,
          patch: (writer) => ({ name: `Writer ${writer}` }),
          valueOf: (body) => body.data_type.name,
          replace: { ...customerType, name: "Replaced" },
        },
      };
    },
  ],
  [
    "data source record",
    async () => {
      const { api, hubId } = await tenantWithHub();
      const answer = await api.post("/data-type", customerType);
      expect(answer.status, JSON.stringify(answer.body)).toBe(201);
      await created(api.post("/data", { dataTypeId: answer.body.data_type._id, hubId, dataId: "Acme", segment: "retail" }));
      return {
        api,
        subject: {
          path: `/data/type/Customer/Acme?hubId=${hubId}`,
          patch: (writer) => ({ note: `Writer ${writer}` }),
          valueOf: (body) => body.data.note,
          replace: { segment: "wholesale", note: "Replaced" },
        },
      };
    },
  ],
];

const withIfMatch = (api: ApiClient, method: string, path: string, ifMatch: string, body?: unknown) =>
  api.request(method, path, { ...(body === undefined ? {} : { body }), headers: { "if-match": ifMatch } });

describe.each(kinds)("ETag and If-Match: %s", (_kind, setUp) => {
  it("GET answers the version as a strong ETag; a write answers the new one, and GET follows", async () => {
    const { api, subject } = await setUp();
    const read = await api.get(subject.path);
    expect(read.status).toBe(200);
    const etag = read.headers.get("etag");
    expect(etag).toMatch(/^"[1-9][0-9]*"$/);
    const patched = await withIfMatch(api, "PATCH", subject.path, etag as string, subject.patch(1));
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    const next = patched.headers.get("etag");
    expect(next).toBe(`"${Number(JSON.parse(etag as string)) + 1}"`);
    expect((await api.get(subject.path)).headers.get("etag")).toBe(next);
  });

  it("PATCH with a stale If-Match answers 412 sys-412 in the product's error shape and changes nothing", async () => {
    const { api, subject } = await setUp();
    const stale = (await api.get(subject.path)).headers.get("etag") as string;
    expect((await api.patch(subject.path, subject.patch(1))).status).toBe(200);
    const before = await api.get(subject.path);
    const refused = await withIfMatch(api, "PATCH", subject.path, stale, subject.patch(2));
    expect(refused.status).toBe(412);
    expect(refused.body).toEqual({ status: false, message: expect.any(String), failedCode: "sys-412" });
    const after = await api.get(subject.path);
    expect(after.body).toEqual(before.body);
    expect(after.headers.get("etag")).toBe(before.headers.get("etag"));
  });

  it("DELETE with a stale If-Match answers 412 and keeps the resource; with the current one it deletes", async () => {
    const { api, subject } = await setUp();
    const stale = (await api.get(subject.path)).headers.get("etag") as string;
    expect((await api.patch(subject.path, subject.patch(1))).status).toBe(200);
    expect(refusal(await withIfMatch(api, "DELETE", subject.path, stale))).toEqual({ status: 412, failedCode: "sys-412" });
    const current = (await api.get(subject.path)).headers.get("etag") as string;
    expect((await withIfMatch(api, "DELETE", subject.path, current)).status).toBe(200);
    expect(refusal(await api.get(subject.path))).toEqual({ status: 404, failedCode: "sys-404" });
  });

  it("If-Match: * matches any current version; on a missing resource any If-Match is 412 (no current representation), without it 404", async () => {
    const { api, subject } = await setUp();
    const version = (await api.get(subject.path)).headers.get("etag") as string;
    expect((await withIfMatch(api, "PATCH", subject.path, "*", subject.patch(1))).status).toBe(200);
    expect((await withIfMatch(api, "DELETE", subject.path, "*")).status).toBe(200);
    const starOnMissing = await withIfMatch(api, "PATCH", subject.path, "*", subject.patch(1));
    expect(starOnMissing.status).toBe(412);
    expect(starOnMissing.body).toMatchObject({ status: false, failedCode: "sys-412" });
    expect(refusal(await withIfMatch(api, "DELETE", subject.path, "*"))).toEqual({ status: 412, failedCode: "sys-412" });
    expect(refusal(await withIfMatch(api, "DELETE", subject.path, version))).toEqual({ status: 412, failedCode: "sys-412" });
    expect(refusal(await api.patch(subject.path, subject.patch(1)))).toEqual({ status: 404, failedCode: "sys-404" });
  });

  it("If-Match takes a list of tags: it proceeds when one of them is the current version (strongly compared)", async () => {
    const { api, subject } = await setUp();
    const current = Number(JSON.parse((await api.get(subject.path)).headers.get("etag") as string));
    const weakOnly = await withIfMatch(api, "PATCH", subject.path, `W/"${current}"`, subject.patch(1));
    expect(refusal(weakOnly)).toEqual({ status: 412, failedCode: "sys-412" });
    const listed = await withIfMatch(api, "PATCH", subject.path, `"${current + 7}", W/"${current}", "${current}"`, subject.patch(1));
    expect(listed.status, JSON.stringify(listed.body)).toBe(200);
  });

  it("of concurrent PATCHes naming the same version, exactly one wins; the others answer 412", async () => {
    const { api, subject } = await setUp();
    const etag = (await api.get(subject.path)).headers.get("etag") as string;
    const answers = await Promise.all(Array.from({ length: 4 }, (_, i) => withIfMatch(api, "PATCH", subject.path, etag, subject.patch(i))));
    const statuses = answers.map((answer) => answer.status).sort();
    expect(statuses).toEqual([200, 412, 412, 412]);
    const winner = answers.find((answer) => answer.status === 200);
    expect(subject.valueOf((await api.get(subject.path)).body)).toBe(subject.valueOf(winner?.body));
  });
});

/** Visits have no PUT (spec); the other kinds replace with If-Match too. */
const replaceable = kinds.filter(([kind]) => kind !== "visit");

describe.each(replaceable)("ETag and If-Match on PUT: %s", (_kind, setUp) => {
  it("PUT honours If-Match like PATCH", async () => {
    const { api, subject } = await setUp();
    const etag = (await api.get(subject.path)).headers.get("etag") as string;
    expect(
      (await withIfMatch(api, "PUT", subject.path, `"${Number(JSON.parse(etag)) + 5}"`, subject.replace as Record<string, unknown>)).status,
    ).toBe(412);
    const replaced = await withIfMatch(api, "PUT", subject.path, etag, subject.replace as Record<string, unknown>);
    expect(replaced.status, JSON.stringify(replaced.body)).toBe(200);
    expect(subject.valueOf(replaced.body)).toBe("Replaced");
  });
});

describe("If-Match syntax", () => {
  it.each([
    ["a weak ETag (weak tags never match strongly)", 'W/"1"'],
    ["a list of tags none of which is current", '"7", "8"'],
    ["a strong tag of another shape", '"abc"'],
    ["a list of weak tags", 'W/"1", W/"2"'],
  ])("answers %s with 412, changing nothing", async (_label, ifMatch) => {
    const { api, hubId } = await tenantWithHub();
    const response = await withIfMatch(api, "PATCH", `/hub/${hubId}`, ifMatch, { name: "Renamed" });
    expect(response.status).toBe(412);
    expect(response.body).toMatchObject({ status: false, failedCode: "sys-412" });
    expect((await api.get(`/hub/${hubId}`)).body.data.name).toBe(hubBody.name);
  });

  it.each([
    ["an unquoted version", "1"],
    ["an unterminated tag", '"1'],
    ["a tag followed by junk", '"1" x'],
    ["a list with a bare word", '"1", two'],
    ["only commas", ", ,"],
  ])("refuses %s (not an entity-tag list) with 400 naming If-Match, changing nothing", async (_label, ifMatch) => {
    const { api, hubId } = await tenantWithHub();
    const response = await withIfMatch(api, "PATCH", `/hub/${hubId}`, ifMatch, { name: "Renamed" });
    expect(refusal(response)).toEqual({ status: 400, failedCode: "sys-400" });
    expect(response.body).toMatchObject({ status: false, errors: [{ field: "If-Match" }] });
    expect((await api.get(`/hub/${hubId}`)).body.data.name).toBe(hubBody.name);
  });

  it("without If-Match, writes behave as before (no precondition)", async () => {
    const { api, hubId } = await tenantWithHub();
    expect((await api.patch(`/hub/${hubId}`, { name: "One" })).status).toBe(200);
    expect((await api.patch(`/hub/${hubId}`, { name: "Two" })).status).toBe(200);
    expect((await api.get(`/hub/${hubId}`)).headers.get("etag")).toBe('"3"');
  });

  it("answers no ETag on lists", async () => {
    const { api } = await tenantWithHub();
    expect((await api.get("/hubs")).headers.get("etag")).toBeNull();
  });
});

describe("ETag and If-Match: app integration (POST update, multipart)", () => {
  const form = (fields: Record<string, string>, certificate?: string) => {
    const boundary = `----etag-${Date.now()}`;
    const parts = Object.entries(fields).map(
      ([name, value]) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`,
    );
    if (certificate)
      parts.push(
        `--${boundary}\r\nContent-Disposition: form-data; name="azureCert"; filename="sso.pem"\r\nContent-Type: application/x-pem-file\r\n\r\n${certificate}\r\n`,
      );
    return { rawBody: Buffer.from(`${parts.join("")}--${boundary}--\r\n`), contentType: `multipart/form-data; boundary=${boundary}` };
  };
  const authUrl = "https://login.microsoftonline.com/0f1e2d3c-tenant/saml2";

  it("answers an ETag on GET; the update and DELETE take If-Match", async () => {
    const { api } = newTenant();
    const create = form({ integrationType: "azure", azureAuthUrl: authUrl }, selfSignedCertificate().pem);
    const createdAnswer = await api.request("POST", "/app-integration", {
      rawBody: create.rawBody,
      headers: { "content-type": create.contentType },
    });
    expect(createdAnswer.status, JSON.stringify(createdAnswer.body)).toBe(201);
    const path = `/app-integration/${createdAnswer.body.data._id}`;
    const etag = (await api.get(path)).headers.get("etag");
    expect(etag).toBe('"1"');
    const update = (ifMatch: string) => {
      const body = form({ azureAuthUrl: `${authUrl}?v=${ifMatch.length}` });
      return api.request("POST", path, { rawBody: body.rawBody, headers: { "content-type": body.contentType, "if-match": ifMatch } });
    };
    expect(refusal(await update('"7"'))).toEqual({ status: 412, failedCode: "sys-412" });
    const updated = await update('"1"');
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
    expect(updated.headers.get("etag")).toBe('"2"');
    expect(refusal(await withIfMatch(api, "DELETE", path, '"1"'))).toEqual({ status: 412, failedCode: "sys-412" });
    expect((await withIfMatch(api, "DELETE", path, '"2"')).status).toBe(200);
  });
});

// The inspector's actions: register a device, subscribe and unsubscribe it, create and edit a device group, send
// a message. Each goes through the API a real client would call (the admin API to register, FCM's own APIs for
// the rest), so the request log shows exactly what was sent, and each shows the API's answer as it came.
// Loaded after inspector.js, whose helpers (h, field, link, notice, refreshStats, views) it uses.
"use strict";

/**
 * Who the page acts for, kept while the page is open. FCM's APIs need a bearer token: fcm-emulator always
 * accepts `owner` (unrestricted, as with the Firebase emulators); a token given with --accept-token acts as its
 * principal, under IAM.
 */
const acting = { project: "", sender: "", token: "owner" };

/**
 * One HTTP call as a client makes it. Never throws for an HTTP error: the caller shows the API's own answer.
 * Answers {ok, status, value (parsed JSON or null), text, method, path}.
 */
async function call(method, path, { body, headers } = {}) {
  const options = { method, headers: { ...headers } };
  if (body !== undefined) {
    options.headers["Content-Type"] = "application/json";
    options.body = JSON.stringify(body);
  }
  const answer = { ok: false, status: 0, value: null, text: "", method, path };
  let response;
  try {
    response = await fetch(path, options);
  } catch (error) {
    answer.text = String(error.message || error);  // a header the browser will not send, or no connection
    return answer;
  }
  answer.status = response.status;
  answer.ok = response.ok;
  answer.text = await response.text();
  try { answer.value = answer.text ? JSON.parse(answer.text) : {}; } catch (_) { answer.value = null; }
  return answer;
}

/** A call to one of FCM's APIs, with the acting token (and the legacy APIs' headers when asked). */
function fcm(method, path, { body, sender } = {}) {
  const headers = { Authorization: "Bearer " + acting.token };
  if (sender !== undefined) Object.assign(headers, { access_token_auth: "true", project_id: sender });
  return call(method, path, { body, headers });
}

/**
 * The API's words for a failure: google.rpc.Status (HTTP code, status, FcmError code or reason, message), the
 * legacy device-group API's flat `{"error": "…"}`, or the start of whatever else came (an HTML error page).
 */
function problem(answer) {
  if (answer.status === 0) return `No answer: ${answer.text}`;
  const error = answer.value && answer.value.error;
  if (error && typeof error === "object") {
    const codes = [error.status, ...(Array.isArray(error.details) ? error.details : []).map((d) => d && (d.errorCode || d.reason))];
    const named = [...new Set(codes.filter((c) => typeof c === "string" && c))];
    return `${answer.status}${named.length ? " " + named.join(" / ") : ""}: ${error.message || ""}`;
  }
  if (typeof error === "string") return `${answer.status}: ${error}`;
  return `${answer.status}: ${answer.text.slice(0, 400) || "(an empty answer)"}`;
}

/** Where an action's outcome shows: the request made, and what came back. */
function outcome(id) {
  return h("output.result", { id, role: "status", "aria-live": "polite", hidden: true });
}

function report(result, answer, success, ...extra) {
  result.hidden = false;
  result.dataset.state = answer.ok ? "ok" : "error";
  result.setAttribute("role", answer.ok ? "status" : "alert");
  result.replaceChildren(
    h("div.outcome", {}, h("strong", {}, answer.ok ? "Done: " : "Refused: "), answer.ok ? success : problem(answer),
      answer.ok ? extra : null),
    h("div.request.muted.small", {}, h("code.wrap", {}, `${answer.method} ${answer.path}`), ` → ${answer.status || "no answer"}`));
}

/** A refusal the page makes itself, before any request: nothing was sent. */
function refuse(result, text) {
  result.hidden = false;
  result.dataset.state = "error";
  result.setAttribute("role", "alert");
  result.replaceChildren(h("div.outcome", {}, h("strong", {}, "Not sent: "), text));
}

/** Runs `action` with its button disabled, so a double click sends nothing twice. */
function button(id, label, action, kind) {
  const element = h("button" + (kind ? "." + kind : ""), { type: "button", id }, label);
  element.addEventListener("click", async () => {
    element.disabled = true;
    try { await action(); } finally { element.disabled = false; }
  });
  return element;
}

const enc = encodeURIComponent;

function subscriptionsPath(project, registration) {
  return `/v1/projects/${enc(project)}/registrations/${enc(registration)}/topicSubscriptions`;
}

/** Subscribes or unsubscribes through the v1 Topic Subscription API, as fcmctl does. */
async function changeSubscription(subscribe, { project, registration, topic }, result) {
  if (!project) return refuse(result, "give the project id: the v1 API names it in the path.");
  if (!registration || !topic) return refuse(result, "give a registration (token or FID) and a topic.");
  const base = subscriptionsPath(project, registration);
  // Without allowMissing, unsubscribing a topic the device does not have says so instead of passing quietly.
  const answer = subscribe
    ? await fcm("POST", `${base}?topicName=${enc(topic)}`, { body: {} })
    : await fcm("DELETE", `${base}/${enc(topic)}`);
  report(result, answer, subscribe
    ? [`subscribed to `, h("a", { href: link("topic", topic, { project }) }, topic), ` since ${(answer.value || {}).createTime || (answer.value || {}).create_time || "now"}.`]
    : `unsubscribed from ${topic}.`);
  refreshStats();
  return answer;
}

// ---- the Actions view ----------------------------------------------------------------------------------

views.actions = async (container, { params }) => {
  for (const name of ["project", "sender"]) if (params.get(name) !== null) acting[name] = params.get(name);
  if (!acting.project) {
    // A starting point: the project of a registration the emulator knows.
    try {
      const first = (await api("GET", "/registrations?page_size=1")).registrations[0];
      if (first && !acting.project) acting.project = first.project;
    } catch (_) { /* left empty: the user types it */ }
    if (route().name !== "actions") return;  // the user went elsewhere meanwhile
  }
  const known = h("datalist", { id: "known-registrations" });
  const listKnown = async () => {
    try {
      const page = await api("GET", "/registrations?page_size=100");
      known.replaceChildren(...page.registrations.map((r) => h("option", { value: r.id }, `${r.platform} ${r.app}`)));
    } catch (_) { /* suggestions only */ }
  };
  const forms = {
    register: registerPanel(),
    topics: topicsPanel(params),
    group: groupPanel(params),
    send: sendPanel(params),
  };
  // A device just registered is the one the other panels act on next.
  forms.register.onRegistered = (id) => {
    forms.topics.use(id);
    forms.send.use(id);
    listKnown();
  };
  container.replaceChildren(
    actingPanel(), known,
    h("div.actions", {},
      h("div", {}, forms.register.element, forms.topics.element, forms.group.element),
      h("div", {}, forms.send.element)));
  listKnown();
};

function actingPanel() {
  const project = h("input", { id: "act-project", value: acting.project, placeholder: "quickstart-demo", size: 22 });
  const sender = h("input", { id: "act-sender", value: acting.sender, placeholder: "123456789012", size: 16, inputmode: "numeric" });
  const token = h("input", { id: "act-token", value: acting.token, size: 16, autocomplete: "off", spellcheck: false });
  project.addEventListener("input", () => { acting.project = project.value.trim(); });
  sender.addEventListener("input", () => { acting.sender = sender.value.trim(); });
  token.addEventListener("input", () => { acting.token = token.value.trim(); });
  return h("section.panel", { id: "acting" }, h("h2", {}, "Acting as"),
    h("div.fields", {},
      field("Project id", project, "in the v1 APIs' paths; a new device's project"),
      field("Sender id (project number)", sender, "the device-group API's project_id header"),
      field("Access token", token, "'owner' may do anything; an --accept-token token acts under IAM")),
    h("p.muted.small", {}, "Registering uses the admin API (not logged, as it is no FCM call); everything else is a call to the FCM ",
      "APIs this emulator serves, with Authorization: Bearer and the token above, and appears in ", h("a", { href: "#requests" }, "Requests"), "."));
}

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

function randomText(length) {
  return [...crypto.getRandomValues(new Uint8Array(length))].map((b) => ALPHABET[b % 64]).join("");
}

/** Something shaped like what the SDKs hand an app: an FCM token, or a Firebase installation ID. */
function madeUp(kind) {
  return kind === "fid" ? "cdef"[crypto.getRandomValues(new Uint8Array(1))[0] % 4] + randomText(21) : `${randomText(11)}:APA91b${randomText(134)}`;
}

function registerPanel() {
  const kind = h("select", { id: "register-kind" }, h("option", { value: "token" }, "FCM token"), h("option", { value: "fid" }, "Installation ID (FID)"));
  const id = h("input", { id: "register-id", size: 34, spellcheck: false, placeholder: "a token or FID" });
  const platform = h("select", { id: "register-platform" }, ["ANDROID", "IOS", "WEB"].map((p) => h("option", { value: p }, p)));
  const app = h("input", { id: "register-app", value: "com.example.app", size: 22 });
  const result = outcome("register-result");
  const panel = { onRegistered: () => {} };
  async function register() {
    const registration = id.value.trim();
    if (!registration) return refuse(result, "give a token or FID, or press Make one up.");
    const body = { registrations: [{ [kind.value]: registration, platform: platform.value, app: app.value.trim() || undefined }] };
    if (acting.project) body.project = acting.project;
    if (acting.sender) body.sender_id = acting.sender;
    const answer = await call("POST", API + "/registrations", { body });
    report(result, answer,
      [`registered ${registration} (${platform.value}, ${app.value.trim() || "com.example.app"}) in `,
        acting.project ? `project ${acting.project}` : "no project (any)", acting.sender ? `, sender ${acting.sender}` : "", ". "],
      h("a", { href: link("registration", registration), id: "register-open" }, "Open the device"));
    if (answer.ok) {
      refreshStats();
      panel.onRegistered(registration);
    }
  }
  panel.element = h("section.panel", { id: "register" }, h("h2", {}, "Register a device"),
    h("p.muted.small", {}, "What an app's install does: FCM knows a token only once the SDK made it. POST /emulator/v1/registrations."),
    h("div.fields", {}, field("Kind", kind), field("Token or FID", id),
      h("button", { type: "button", id: "register-make-up", onclick: () => { id.value = madeUp(kind.value); } }, "Make one up")),
    h("div.fields", {}, field("Platform", platform), field("App", app)),
    h("div.toolbar", {}, button("register-button", "Register", register, "primary")), result);
  return panel;
}

function topicsPanel(params) {
  const registration = h("input", { id: "topic-registration", size: 44, list: "known-registrations", spellcheck: false, value: params.get("registration") || "" });
  const topic = h("input", { id: "topic-name", size: 22, placeholder: "news", value: params.get("topic") || "" });
  const result = outcome("topic-result");
  const values = () => ({ project: acting.project, registration: registration.value.trim(), topic: topic.value.trim() });
  return {
    use: (id) => { registration.value = id; },
    element: h("section.panel", { id: "topics" }, h("h2", {}, "Subscribe or unsubscribe"),
      h("p.muted.small", {}, "The v1 Topic Subscription API: POST …/registrations/R/topicSubscriptions?topicName=T and DELETE …/topicSubscriptions/T."),
      h("div.fields", {}, field("Registration", registration), field("Topic", topic)),
      h("div.toolbar", {},
        button("subscribe-button", "Subscribe", () => changeSubscription(true, values(), result), "primary"),
        button("unsubscribe-button", "Unsubscribe", () => changeSubscription(false, values(), result))),
      result),
  };
}

function lines(text) { return text.split(/[\n,]/).map((l) => l.trim()).filter(Boolean); }

function groupPanel(params) {
  const name = h("input", { id: "group-name", size: 22, placeholder: "appUser-Chris", value: params.get("group") || "" });
  const members = h("textarea", { id: "group-members", rows: 3, spellcheck: false, placeholder: "registration tokens, one a line (at most 20 in a group)" });
  const result = outcome("group-result");

  /** The group's members now, from the admin listing: what FCM itself never tells. */
  async function membersNow(group) {
    try {
      const page = await api("GET", "/groups" + query({ q: group, page_size: 100 }));
      const found = page.groups.find((g) => g.name === group && g.sender_id === acting.sender);
      return found
        ? h("div.small", { id: "group-members-now" }, `${group} now has ${found.members.length} member${found.members.length === 1 ? "" : "s"}: `,
          h("ul.members", {}, found.members.map((m) => h("li", {}, h("a", { href: link("registration", m) }, h("code", {}, shortID(m)))))))
        : h("div.small", { id: "group-members-now" }, `${group} has no members left: FCM deletes a group with its last member.`);
    } catch (_) { return null; }
  }

  async function change(operation) {
    const group = name.value.trim();
    const ids = lines(members.value);
    if (!group || !ids.length) return refuse(result, "give the group's name (notification_key_name) and at least one registration.");
    const body = { operation, notification_key_name: group, registration_ids: ids };
    if (operation !== "create") {
      // As fcmctl does: the key is read just before, since FCM may answer a different valid one every time.
      const read = await fcm("GET", "/fcm/notification" + query({ notification_key_name: group }), { sender: acting.sender });
      if (!read.ok) return report(result, read, "");
      body.notification_key = read.value.notification_key;
    }
    const answer = await fcm("POST", "/fcm/notification", { body, sender: acting.sender });
    const done = { create: `created ${group}`, add: `added ${ids.length} to ${group}`, remove: `removed ${ids.length} from ${group}` }[operation];
    report(result, answer, [`${done}; notification key `, h("code.key", { id: "group-key" }, (answer.value || {}).notification_key || "")],
      answer.ok ? await membersNow(group) : null);
    refreshStats();
  }
  return {
    element: h("section.panel", { id: "group" }, h("h2", {}, "Device group"),
      h("p.muted.small", {}, "The legacy device-group API, POST /fcm/notification with project_id: the sender id above. Adding or removing reads the group's key first (GET /fcm/notification?notification_key_name=)."),
      h("div.fields", {}, field("Group name", name), field("Members", members)),
      h("div.toolbar", {},
        button("group-create", "Create", () => change("create"), "primary"),
        button("group-add", "Add members", () => change("add")),
        button("group-remove", "Remove members", () => change("remove"))),
      result),
  };
}

/** "key=value" lines; FCM's data values are strings. */
function dataOf(text) {
  const data = {};
  for (const [index, line] of text.split("\n").entries()) {
    if (!line.trim()) continue;
    const at = line.indexOf("=");
    if (at < 1) throw new Error(`data line ${index + 1}: expected key=value`);
    data[line.slice(0, at).trim()] = line.slice(at + 1);
  }
  return data;
}

/** The message as fcmctl send builds it: one image on every platform's field, with mutable-content for iOS. */
function messageOf({ target, value, title, body, image, data }) {
  const message = { [target === "group" ? "token" : target]: value };
  const notification = {};
  if (title) notification.title = title;
  if (body) notification.body = body;
  if (image) {
    notification.image = image;
    message.android = { notification: { image } };
    message.apns = { payload: { aps: { "mutable-content": 1 } }, fcm_options: { image } };
    message.webpush = { headers: { image } };
  }
  if (Object.keys(notification).length) message.notification = notification;
  if (Object.keys(data).length) message.data = data;
  return message;
}

function sendPanel(params) {
  const targets = { token: "Token", fid: "FID", topic: "Topic", condition: "Condition", group: "Device group (by name)" };
  const target = h("select", { id: "send-target" }, Object.entries(targets).map(([value, label]) => h("option", { value }, label)));
  const value = h("input", { id: "send-to", size: 40, list: "known-registrations", spellcheck: false });
  const title = h("input", { id: "send-title", size: 24 });
  const body = h("input", { id: "send-body", size: 36 });
  const image = h("input", { id: "send-image", size: 40, type: "url", placeholder: "https://… (the devices fetch it)" });
  const data = h("textarea", { id: "send-data", rows: 2, spellcheck: false, placeholder: "key=value, one a line" });
  const validateOnly = h("input", { id: "send-validate-only", type: "checkbox" });
  const preview = h("pre.raw.small", { id: "send-preview" });
  const result = outcome("send-result");
  if (params.get("topic")) { target.value = "topic"; value.value = params.get("topic"); }
  if (params.get("group")) { target.value = "group"; value.value = params.get("group"); }
  if (params.get("registration")) value.value = params.get("registration");

  function fields() {
    return { target: target.value, value: value.value.trim(), title: title.value, body: body.value, image: image.value.trim(), data: dataOf(data.value) };
  }
  function request(key) {
    const values = fields();
    if (values.target === "group") values.value = key;
    const request = { message: messageOf(values) };
    if (validateOnly.checked) request.validate_only = true;
    return request;
  }
  function showPreview() {
    try {
      preview.textContent = JSON.stringify(request(target.value === "group" ? `<the key of ${value.value.trim()}, read when sending>` : undefined), null, 2);
    } catch (error) { preview.textContent = error.message; }
  }
  for (const control of [target, value, title, body, image, data, validateOnly]) control.addEventListener("input", showPreview);
  target.addEventListener("change", showPreview);
  showPreview();

  async function send() {
    if (!acting.project) return refuse(result, "give the project id: messages:send names it in the path.");
    const values = (() => { try { return fields(); } catch (error) { return refuse(result, error.message); } })();
    if (!values) return;
    let key;
    if (values.target === "group") {
      // A group is addressed by its notification key, which the device-group API gives for its name.
      const read = await fcm("GET", "/fcm/notification" + query({ notification_key_name: values.value }), { sender: acting.sender });
      if (!read.ok) return report(result, read, "");
      key = read.value.notification_key;
    }
    const answer = await fcm("POST", `/v1/projects/${enc(acting.project)}/messages:send`, { body: request(key) });
    const where = {
      token: () => h("a", { href: link("registration", values.value), id: "send-open" }, "Open the device's inbox"),
      fid: () => h("a", { href: link("registration", values.value), id: "send-open" }, "Open the device's inbox"),
      topic: () => h("a", { href: link("topic", values.value, { project: acting.project }), id: "send-open" }, "Who is subscribed"),
      group: () => h("a", { href: link("groups", undefined, { q: values.value }), id: "send-open" }, "The group's members"),
      condition: () => null,
    }[values.target]();
    report(result, answer, [validateOnly.checked ? "valid (validate_only: nothing delivered) " : "sent ", h("code", { id: "send-name" }, (answer.value || {}).name || ""), ". "],
      answer.ok && !validateOnly.checked ? where : null);
    refreshStats();
  }
  return {
    use: (id) => { target.value = "token"; value.value = id; showPreview(); },
    element: h("section.panel", { id: "send" }, h("h2", {}, "Send a message"),
      h("p.muted.small", {}, "POST /v1/projects/P/messages:send, checked as FCM checks it; delivered messages land in the devices' inboxes."),
      h("div.fields", {}, field("To", target), field("Token, FID, topic, condition or group name", value)),
      h("div.fields", {}, field("Title", title), field("Body", body), field("Image URL", image)),
      h("div.fields", {}, field("Data", data), h("label.check", {}, validateOnly, " Validate only")),
      h("div.toolbar", {}, button("send-button", "Send", send, "primary")),
      result,
      h("details", { open: true }, h("summary", {}, "Request body"), preview)),
  };
}

// ---- on a device's page --------------------------------------------------------------------------------

/**
 * The device page's own subscribe box and unsubscribe buttons: the same API calls, for this registration in
 * its project. `reload` shows the device again once the emulator answered.
 */
function deviceTopicActions(id, record, reload) {
  const project = () => record.project || acting.project;
  const topic = h("input", { id: "device-topic", size: 22, placeholder: "topic", "aria-label": "Topic to subscribe to" });
  const result = outcome("device-result");
  async function run(subscribe, name) {
    const answer = await changeSubscription(subscribe, { project: project(), registration: id, topic: name }, result);
    if (answer && answer.ok) await reload();
  }
  const subscribe = button("device-subscribe", "Subscribe", () => run(true, topic.value.trim()));
  topic.addEventListener("keydown", (event) => { if (event.key === "Enter") subscribe.click(); });
  return {
    toolbar: h("div.toolbar", {}, topic, subscribe,
      record.project ? null : h("span.muted.small", {}, "no project of its own: the Actions page's project is used")),
    result,
    unsubscribe: (name) => {
      const element = button(undefined, "Unsubscribe", () => run(false, name));
      element.classList.add("device-unsubscribe");
      element.dataset.topic = name;
      return element;
    },
  };
}

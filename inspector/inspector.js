// The fcm-emulator inspector: a page over the admin API (/emulator/v1/), shipped inside the executable.
// No framework and no build step: the emulator serves this file as written. Every value from the emulator is
// put on the page as text (never as HTML), since registrations, topics and messages come from clients.
"use strict";

const API = "/emulator/v1";
const ENDPOINTS = [
  "groups.mutate", "groups.get", "groups.export", "topics.create", "topics.get", "topics.list", "topics.patch",
  "topics.delete", "iid.batchAdd", "iid.batchRemove", "iid.info", "iid.relation", "messages.send", "oauth.token",
  "sts.token", "iam.generateAccessToken", "metadata",
];
const FCM_ERROR_CODES = [
  "UNSPECIFIED_ERROR", "INVALID_ARGUMENT", "UNREGISTERED", "SENDER_ID_MISMATCH", "QUOTA_EXCEEDED", "UNAVAILABLE",
  "INTERNAL", "THIRD_PARTY_AUTH_ERROR", "APNS_AUTH_ERROR",
];
const PAGE_SIZE = 50;

// ---- small helpers --------------------------------------------------------------------------------------

/** h("div.card", {title: "x"}, child, "text") builds an element; strings become text nodes. */
function h(spec, attributes, ...children) {
  const [tag, ...classes] = spec.split(".");
  const element = document.createElement(tag || "div");
  if (classes.length) element.className = classes.join(" ");
  for (const [name, value] of Object.entries(attributes || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("on")) element.addEventListener(name.slice(2), value);
    else if (name === "dataset") Object.assign(element.dataset, value);
    else if (name in element && typeof value !== "string") element[name] = value;
    else element.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return element;
}

async function api(method, path, body) {
  const options = { method, headers: {} };
  // The emulator takes a change (any method but GET) only as JSON, body or not: no form on another site can
  // send that (docs/emulator.md, "What the admin API accepts").
  if (method !== "GET") options.headers["Content-Type"] = "application/json";
  if (body !== undefined) options.body = typeof body === "string" ? body : JSON.stringify(body);
  const response = await fetch(API + path, options);
  const text = await response.text();
  let value = {};
  try { value = text ? JSON.parse(text) : {}; } catch (_) { value = { raw: text }; }
  if (!response.ok) {
    const message = (value.error && (value.error.message || value.error)) || text || response.statusText;
    throw new Error(`${method} ${path}: ${response.status} ${message}`);
  }
  return value;
}

/** Percent-encoded, spaces as %20: the emulator, like Google's front end, does not read "+" as a space. */
function query(parameters) {
  const parts = [];
  for (const [name, value] of Object.entries(parameters)) {
    if (value !== undefined && value !== null && value !== "") parts.push(encodeURIComponent(name) + "=" + encodeURIComponent(value));
  }
  return parts.length ? "?" + parts.join("&") : "";
}

function number(value) { return Number(value || 0).toLocaleString("en-US"); }

function shortID(id) { return id.length > 28 ? id.slice(0, 14) + "…" + id.slice(-8) : id; }

function pick(object, ...names) {
  if (!object) return undefined;
  for (const name of names) if (object[name] !== undefined) return object[name];
  return undefined;
}

function notice(text, kind) {
  const box = h("div.notice" + (kind ? "." + kind : ""), { role: "status" }, text);
  document.body.append(box);
  setTimeout(() => box.remove(), 4000);
}

function failure(container, error) {
  container.replaceChildren(h("p.error", { role: "alert" }, String(error.message || error)));
}

/** The route: "#topic/news?project=acme" → {name: "topic", rest: "news", params}. */
function route() {
  const hash = location.hash.replace(/^#/, "") || "registrations";
  const [path, search] = hash.split("?");
  const slash = path.indexOf("/");
  return {
    name: slash < 0 ? path : path.slice(0, slash),
    rest: slash < 0 ? "" : decodeURIComponent(path.slice(slash + 1)),
    params: new URLSearchParams(search || ""),
  };
}

function link(name, rest, params) {
  return "#" + name + (rest !== undefined ? "/" + encodeURIComponent(rest) : "") + query(params || {});
}

// ---- paged tables ---------------------------------------------------------------------------------------

/**
 * A table fed by one of the admin API's paged listings. `load(token)` answers {rows, next, total}; the
 * pager keeps the tokens of the pages before, so Previous needs no offset from the server.
 */
function pagedTable({ columns, load, empty, rowLink, id }) {
  const body = h("tbody");
  const table = h("table.grid", { id }, h("thead", {}, h("tr", {}, columns.map((c) => h("th", {}, c.title)))), body);
  const summary = h("span.muted.summary");
  const previous = h("button", { type: "button", disabled: true }, "‹ Previous");
  const next = h("button", { type: "button", disabled: true }, "Next ›");
  const tokens = [null];
  let page = 0;
  let nextToken = null;

  async function show(index) {
    const started = performance.now();
    try {
      const { rows, next: following, total } = await load(tokens[index]);
      page = index;
      nextToken = following || null;
      body.replaceChildren(...(rows.length ? rows.map((row) => {
        const tr = h("tr", { tabindex: rowLink ? 0 : undefined }, columns.map((c) => h("td", {}, c.cell(row))));
        if (rowLink) {
          tr.classList.add("link");
          tr.addEventListener("click", (event) => { if (!event.target.closest("a,button")) location.hash = rowLink(row); });
          tr.addEventListener("keydown", (event) => { if (event.key === "Enter") location.hash = rowLink(row); });
        }
        return tr;
      }) : [h("tr", {}, h("td.muted", { colSpan: columns.length }, empty))]));
      const first = page * PAGE_SIZE + 1;
      summary.textContent = rows.length
        ? `${number(first)}–${number(first + rows.length - 1)}` + (total !== undefined ? ` of ${number(total)}` : "")
        : total !== undefined ? `0 of ${number(total)}` : "";
      previous.disabled = page === 0;
      next.disabled = !nextToken;
      table.dataset.loadedMs = String(Math.round(performance.now() - started));
      table.dataset.ready = "true";
      if (!window.inspectorFirstRows) {
        window.inspectorFirstRows = performance.now();
        performance.mark("inspector-first-rows");
      }
    } catch (error) {
      body.replaceChildren(h("tr", {}, h("td.error", { colSpan: columns.length }, String(error.message))));
    }
  }

  previous.addEventListener("click", () => show(page - 1));
  next.addEventListener("click", () => {
    tokens[page + 1] = nextToken;
    tokens.length = page + 2;
    show(page + 1);
  });
  const element = h("div.paged", {}, table, h("div.pager", {}, previous, next, summary));
  return { element, reload: () => show(page), first: () => { tokens.length = 1; return show(0); } };
}

function searchBox(placeholder, value, onSearch, id) {
  const input = h("input", { type: "search", placeholder, value: value || "", id, "aria-label": placeholder, size: 48 });
  let timer = null;
  input.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(() => onSearch(input.value.trim()), 250);
  });
  input.addEventListener("keydown", (event) => { if (event.key === "Enter") { clearTimeout(timer); onSearch(input.value.trim()); } });
  return input;
}

function chips(values, more) {
  return h("span.chips", {}, values.map((v) => h("a.chip", { href: link("topic", v) }, v)), more > 0 ? h("span.muted", {}, ` +${number(more)}`) : null);
}

function kindBadge(kind) { return h("span.badge." + (kind === "fid" ? "fid" : "token"), {}, kind === "fid" ? "FID" : "token"); }

// ---- views ----------------------------------------------------------------------------------------------

const views = {};

views.registrations = (container, { params }) => {
  const q = params.get("q") || "";
  const table = pagedTable({
    id: "registrations-table",
    empty: q ? "No registration matches." : "No registrations yet: Actions › Register a device, POST /emulator/v1/registrations, or fcmctl validate --emulator-seed.",
    rowLink: (r) => link("registration", r.id),
    columns: [
      { title: "Registration", cell: (r) => h("span.id", {}, kindBadge(r.kind), " ", h("code", { title: r.id }, shortID(r.id))) },
      { title: "Project", cell: (r) => r.project || h("span.muted", {}, "any") },
      { title: "Platform", cell: (r) => r.platform },
      { title: "App", cell: (r) => r.app },
      { title: "Topics", cell: (r) => chips(r.topics, r.topic_count - r.topics.length) },
      { title: "Inbox", cell: (r) => number(r.inbox_count) },
      { title: "State", cell: (r) => r.uninstalled ? h("span.badge.gone", {}, "uninstalled") : h("span.badge.ok", {}, "installed") },
    ],
    load: async (token) => {
      const page = await api("GET", "/registrations" + query({ q, page_size: PAGE_SIZE, page_token: token }));
      return { rows: page.registrations, next: page.next_page_token, total: q ? undefined : page.total };
    },
  });
  container.replaceChildren(
    h("div.toolbar", {},
      searchBox("Search by token, FID, app, project or topic (topic:news, app:com.acme, fid:…)", q,
        (text) => { location.hash = link("registrations", undefined, { q: text }); }, "registration-search")),
    table.element);
  table.first();
};

views.registration = async (container, { rest: id }) => {
  container.replaceChildren(h("p.muted", {}, "Loading…"));
  let record;
  let inbox;
  try {
    [record, inbox] = await Promise.all([
      api("GET", "/registrations/" + encodeURIComponent(id)),
      api("GET", "/registrations/" + encodeURIComponent(id) + "/inbox"),
    ]);
  } catch (error) { return failure(container, error); }
  const uninstall = h("button.danger", {
    type: "button", id: "uninstall", disabled: record.uninstalled,
    onclick: async () => {
      if (!confirm("Uninstall the app from this device? Its subscriptions vanish and device groups drop it, as FCM does.")) return;
      try {
        await api("DELETE", "/registrations/" + encodeURIComponent(id));
        notice("Uninstalled.");
        render();
      } catch (error) { notice(error.message, "bad"); }
    },
  }, record.uninstalled ? "Uninstalled" : "Uninstall this app");
  const facts = h("dl.facts", {},
    h("dt", {}, record.kind === "fid" ? "Installation ID" : "Token"), h("dd", {}, h("code.wrap", { id: "registration-id" }, id)),
    h("dt", {}, "Project"), h("dd", {}, record.project || "any (registered without a project)"),
    h("dt", {}, "Platform"), h("dd", {}, record.platform),
    h("dt", {}, "App"), h("dd", {}, record.app),
    h("dt", {}, "State"), h("dd", {}, record.uninstalled ? "uninstalled: FCM answers UNREGISTERED / NOT_FOUND" : "installed"),
    h("dt", {}, "Device groups"), h("dd", {}, record.groups.length
      ? record.groups.map((g) => h("a.chip", { href: link("groups", undefined, { q: g.name }) }, `${g.name} (${g.sender_id})`))
      : h("span.muted", {}, "none")));
  const topicsHeading = h("h2", {});
  const topicRows = h("tbody");
  const inboxPanel = h("section.panel", { id: "inbox" });
  // Subscribing here goes through the FCM API (actions.js); the device is then read again, not guessed at.
  const actions = deviceTopicActions(id, record, async () => {
    try {
      const [fresh, messages] = await Promise.all([
        api("GET", "/registrations/" + encodeURIComponent(id)),
        api("GET", "/registrations/" + encodeURIComponent(id) + "/inbox"),
      ]);
      showDevice(fresh, messages);
    } catch (error) { notice(error.message, "bad"); }
  });
  function showDevice(current, delivered) {
    topicsHeading.textContent = `Topics (${number(current.topic_count)})`;
    topicRows.replaceChildren(...(current.topics.length
      ? current.topics.map((t) => h("tr", {}, h("td", {}, h("a", { href: link("topic", t.name, { project: current.project }) }, t.name)),
        h("td", {}, t.create_time), h("td", {}, actions.unsubscribe(t.name))))
      : [h("tr", {}, h("td.muted", { colSpan: 3 }, "No subscriptions."))]));
    const messages = delivered.messages.slice().reverse();
    inboxPanel.replaceChildren(h("h2", {}, `Inbox (${number(messages.length)})`),
      ...(messages.length ? messages.map((m) => inboxMessage(m, current)) : [h("p.muted", {}, "Nothing delivered yet.")]));
  }
  showDevice(record, inbox);
  const topics = h("table.grid.compact", { id: "registration-topics", dataset: { ready: "true" } },
    h("thead", {}, h("tr", {}, h("th", {}, "Topic"), h("th", {}, "Subscribed"), h("th.narrow", {}, ""))), topicRows);
  container.replaceChildren(
    h("div.toolbar", {}, h("a", { href: "#registrations" }, "‹ Registrations"), h("span.grow"),
      h("a.button", { href: link("actions", undefined, { registration: id, project: record.project }), id: "device-send" }, "Send a message"),
      h("button", { type: "button", onclick: () => render() }, "Refresh"), uninstall),
    h("section.panel", {}, h("h2", {}, "Device"), facts),
    h("section.panel", { id: "device-topics" }, topicsHeading, record.uninstalled ? null : actions.toolbar, actions.result, topics),
    inboxPanel);
};

/** What each platform would show for a message: FCM's notification, overridden per platform. */
function displays(message) {
  const base = message.notification || {};
  const android = pick(message.android, "notification") || {};
  const apns = message.apns || {};
  const aps = (pick(apns.payload, "aps")) || {};
  let alert = aps.alert;
  if (typeof alert === "string") alert = { body: alert };
  alert = alert || {};
  const apnsOptions = pick(apns, "fcm_options", "fcmOptions") || {};
  const webpush = message.webpush || {};
  const web = pick(webpush, "notification") || {};
  return {
    android: {
      title: pick(android, "title") ?? base.title, body: pick(android, "body") ?? base.body,
      image: pick(android, "image") ?? base.image, color: pick(android, "color"),
    },
    ios: {
      title: alert.title ?? base.title, subtitle: alert.subtitle, body: alert.body ?? base.body,
      image: pick(apnsOptions, "image") ?? base.image, mutable: Number(aps["mutable-content"] || 0) === 1,
    },
    web: {
      title: web.title ?? base.title, body: web.body ?? base.body,
      image: web.image ?? pick(webpush.headers, "image") ?? base.image, icon: web.icon,
    },
  };
}

function notificationImage(url, platform) {
  const image = h("img.notification-image", { src: url, alt: `${platform} notification image`, referrerpolicy: "no-referrer", dataset: { platform } });
  image.addEventListener("error", () => image.replaceWith(h("p.error.small", {}, `The image did not load: ${url}`)));
  return image;
}

function inboxMessage(entry, record) {
  const message = entry.message || {};
  const shown = displays(message);
  const app = record.app;
  const visible = (d) => d.title || d.body;
  const mine = { ANDROID: "android", IOS: "ios", WEB: "web" }[String(record.platform).toUpperCase()];
  const card = (platform, label, content) => h("figure.device." + platform + (platform === mine ? ".mine" : ""), {},
    h("figcaption", {}, label, platform === mine ? h("span.badge.ok", {}, "this device") : null), content);
  const android = visible(shown.android)
    ? h("div.android", {},
      h("div.android-head", {}, h("span.app-dot", { style: shown.android.color ? undefined : undefined }), `${app} · now`),
      h("div.title", {}, shown.android.title || ""), h("div.body", {}, shown.android.body || ""),
      shown.android.image ? notificationImage(shown.android.image, "android") : null)
    : h("p.muted.small", {}, "Not displayed: a data message reaches the app without a notification.");
  const ios = visible(shown.ios)
    ? h("div.ios", {},
      h("div.ios-head", {}, h("span.app-icon"), h("span.app-name", {}, app.split(".").pop().toUpperCase()), h("span.muted", {}, "now")),
      h("div.ios-main", {},
        h("div", {}, h("div.title", {}, shown.ios.title || ""), shown.ios.subtitle ? h("div.subtitle", {}, shown.ios.subtitle) : null,
          h("div.body", {}, shown.ios.body || "")),
        shown.ios.image && shown.ios.mutable ? notificationImage(shown.ios.image, "ios") : null),
      shown.ios.image && !shown.ios.mutable ? h("p.muted.small", {}, "No image: iOS shows one only with mutable-content: 1 and a notification service extension.") : null)
    : h("p.muted.small", {}, "Not displayed: no alert.");
  const web = visible(shown.web)
    ? h("div.web", {},
      h("div.web-head", {}, shown.web.icon ? h("img.web-icon", { src: shown.web.icon, alt: "", referrerpolicy: "no-referrer" }) : h("span.app-dot"),
        h("span", {}, location.hostname), h("span.muted", {}, "now")),
      h("div.title", {}, shown.web.title || ""), h("div.body", {}, shown.web.body || ""),
      shown.web.image ? notificationImage(shown.web.image, "web") : null)
    : h("p.muted.small", {}, "Not displayed.");
  const data = message.data && Object.keys(message.data).length
    ? h("table.grid.compact.data", {}, h("tbody", {}, Object.entries(message.data).map(([k, v]) => h("tr", {}, h("th", {}, k), h("td", {}, String(v))))))
    : null;
  return h("article.message", { dataset: { name: entry.name } },
    h("header", {}, h("code", {}, entry.name), h("span.muted", {}, entry.received_at)),
    h("div.devices", {}, card("android", "Android", android), card("ios", "iOS", ios), card("web", "Web", web)),
    data ? h("div", {}, h("h3", {}, "Data"), data) : null,
    h("details", {}, h("summary", {}, "Raw message"), h("pre.raw", {}, JSON.stringify(message, null, 2))));
}

views.topics = (container, { params }) => {
  const q = params.get("q") || "";
  const table = pagedTable({
    id: "topics-table",
    empty: q ? "No topic matches." : "No subscriptions yet.",
    rowLink: (t) => link("topic", t.name, { project: t.project }),
    columns: [
      { title: "Topic", cell: (t) => h("a", { href: link("topic", t.name, { project: t.project }) }, t.name) },
      { title: "Project", cell: (t) => t.project || h("span.muted", {}, "any") },
      { title: "Subscribers", cell: (t) => number(t.subscribers) },
    ],
    load: async (token) => {
      const page = await api("GET", "/topics" + query({ q, page_size: PAGE_SIZE, page_token: token }));
      return { rows: page.topics, next: page.next_page_token, total: q ? undefined : page.total };
    },
  });
  container.replaceChildren(
    h("div.toolbar", {}, searchBox("Search topics", q, (text) => { location.hash = link("topics", undefined, { q: text }); }, "topic-search")),
    h("p.muted", {}, "Who is subscribed to what: the view FCM itself never gives."),
    table.element);
  table.first();
};

views.topic = (container, { rest: name, params }) => {
  const project = params.get("project");
  const table = pagedTable({
    id: "subscribers-table",
    empty: "No subscribers.",
    rowLink: (s) => link("registration", s.id),
    columns: [
      { title: "Registration", cell: (s) => h("span.id", {}, kindBadge(s.kind), " ", h("code", { title: s.id }, shortID(s.id))) },
      { title: "Project", cell: (s) => s.project || h("span.muted", {}, "any") },
      { title: "Platform", cell: (s) => s.platform },
      { title: "App", cell: (s) => s.app },
      { title: "Subscribed", cell: (s) => s.create_time },
    ],
    load: async (token) => {
      const page = await api("GET", "/topics/" + encodeURIComponent(name) + "/subscribers" + query({ project, page_size: PAGE_SIZE, page_token: token }));
      return { rows: page.subscribers, next: page.next_page_token, total: page.total };
    },
  });
  container.replaceChildren(
    h("div.toolbar", {}, h("a", { href: "#topics" }, "‹ Topics"), h("span.grow"),
      h("a.button", { href: link("actions", undefined, { topic: name, project: project || undefined }) }, "Send to this topic")),
    h("h2", {}, "Topic ", h("code", {}, name), project !== null ? h("span.muted", {}, ` in ${project || "no project"}`) : null),
    table.element);
  table.first();
};

views.groups = (container, { params }) => {
  const q = params.get("q") || "";
  const table = pagedTable({
    id: "groups-table",
    empty: q ? "No group matches." : "No device groups.",
    columns: [
      { title: "Group (notification_key_name)", cell: (g) => h("strong", {}, g.name) },
      { title: "Sender id", cell: (g) => g.sender_id },
      { title: "Project", cell: (g) => g.project || h("span.muted", {}, "unlinked") },
      { title: "Members", cell: (g) => h("ul.members", {}, g.members.map((m) => h("li", {}, h("a", { href: link("registration", m) }, h("code", { title: m }, shortID(m)))))) },
      { title: "Notification key", cell: (g) => h("code.key", { title: "FCM answers a different valid key on every read" }, g.notification_key) },
      { title: "", cell: (g) => h("a", { href: link("actions", undefined, { group: g.name, sender: g.sender_id, project: g.project || undefined }) }, "Edit or send") },
    ],
    load: async (token) => {
      const page = await api("GET", "/groups" + query({ q, page_size: PAGE_SIZE, page_token: token }));
      return { rows: page.groups, next: page.next_page_token, total: q ? undefined : page.total };
    },
  });
  container.replaceChildren(
    h("div.toolbar", {}, searchBox("Search by group name, sender id or member", q, (text) => { location.hash = link("groups", undefined, { q: text }); }, "group-search")),
    table.element);
  table.first();
};

// Who may do what: every principal the emulator knows, its project and its roles (GET /emulator/v1/principals).
views.principals = async (container) => {
  container.replaceChildren(h("p.muted", {}, "Loading…"));
  let listing;
  try { listing = await api("GET", "/principals"); } catch (error) { return failure(container, error); }
  const defaults = {
    "own-project": "a principal holds roles/firebasecloudmessaging.admin on its own project and nothing elsewhere",
    "none": "a principal holds only the roles granted to it",
    "any-project": "every principal holds roles/firebasecloudmessaging.admin everywhere (the emulator before IAM)",
  };
  const roleCell = (roles) => roles.length
    ? h("ul.members", {}, roles.map((r) => h("li", {}, h("code", {}, r.role), " on ", h("strong", {}, r.project === "*" ? "every project" : r.project),
      h("span.muted", {}, ` (${r.from})`))))
    : h("span.muted", {}, "none");
  const principals = h("table.grid", { id: "principals-table", dataset: { ready: "true" } },
    h("thead", {}, h("tr", {}, ["Principal", "Project", "Roles", "Known from", "Tokens"].map((c) => h("th", {}, c)))),
    h("tbody", {}, listing.principals.length
      ? listing.principals.map((p) => h("tr", {}, h("td", {}, h("code.wrap", {}, p.member)), h("td", {}, p.project), h("td", {}, roleCell(p.roles)),
        h("td", {}, p.sources.join(", ")), h("td", {}, number(p.tokens_issued))))
      : [h("tr", {}, h("td", { colspan: 5 }, h("span.muted", {}, "No principal yet.")))]));
  const permissions = h("table.grid.compact", { id: "permissions-table", dataset: { ready: "true" } },
    h("thead", {}, h("tr", {}, ["Endpoint", "Permission", "Mapping"].map((c) => h("th", {}, c)))),
    h("tbody", {}, listing.permissions.map((p) => h("tr", {},
      h("td", {}, p.endpoint + (p.operation ? ` (${p.operation})` : "")), h("td", {}, h("code", {}, p.permission)),
      h("td", {}, p.documented ? "Google's" : h("span.muted", {}, "a guess"))))));
  const roles = h("table.grid.compact", { id: "roles-table", dataset: { ready: "true" } },
    h("thead", {}, h("tr", {}, ["Role", "FCM permissions"].map((c) => h("th", {}, c)))),
    h("tbody", {}, Object.entries(listing.roles).map(([role, granted]) => h("tr", {}, h("td", {}, h("code", {}, role)),
      h("td", {}, granted.map((g) => h("code", {}, g.replace("cloudmessaging.", ""))).flatMap((c, i) => i ? [", ", c] : [c]))))));
  container.replaceChildren(
    h("section.panel", {}, h("h2", {}, "Principals"),
      h("p.muted.small", { id: "iam-default" }, `--iam-default ${listing.default}: ${defaults[listing.default] || ""}. `,
        `Not checked: ${listing.unrestricted.join(", ")}.`),
      principals),
    h("section.panel", {}, h("h2", {}, "Permission of each endpoint"), permissions),
    h("section.panel", {}, h("h2", {}, "Roles"), roles));
};

// The live tail asks for what came after the newest entry it shows, once a second.
let tailTimer = null;

views.requests = (container, { params }) => {
  const filters = {
    method: h("select", { id: "filter-method", "aria-label": "Method" }, ["", "GET", "POST", "PUT", "PATCH", "DELETE"].map((m) => h("option", { value: m }, m || "any method"))),
    path: h("input", { id: "filter-path", type: "search", placeholder: "path contains", "aria-label": "Path contains" }),
    status: h("input", { id: "filter-status", type: "search", placeholder: "status: 503, 5xx, 0", size: 14, "aria-label": "Status" }),
    registration: h("input", { id: "filter-registration", type: "search", placeholder: "registration (whole token or FID)", size: 36, "aria-label": "Registration" }),
  };
  for (const [name, control] of Object.entries(filters)) control.value = params.get(name) || "";
  const live = h("input", { type: "checkbox", id: "live-tail", checked: params.get("live") !== "0" });
  const body = h("tbody");
  const table = h("table.grid.compact", { id: "requests-table" },
    h("thead", {}, h("tr", {}, ["#", "Time", "Method", "Path", "Endpoint", "Registrations", "Status", "ms"].map((c) => h("th", {}, c)))), body);
  const summary = h("span.muted");
  let last = 0;
  const keep = 500;

  function current() {
    return Object.fromEntries(Object.entries(filters).map(([name, control]) => [name, control.value.trim()]));
  }
  function row(entry) {
    const status = entry.status;
    const kind = status === 0 ? "dropped" : status >= 500 ? "bad" : status >= 400 ? "warn" : "ok";
    return h("tr", { dataset: { seq: entry.seq } },
      h("td", {}, entry.seq), h("td", {}, (entry.time || "").slice(11, 23)), h("td", {}, entry.method),
      h("td", {}, h("code.wrap", {}, entry.path)),
      h("td", {}, entry.endpoint, entry.principal ? h("div.muted.small", { title: entry.principal }, entry.principal.replace(/^serviceAccount:/, "")) : null),
      h("td", {}, (entry.registrations || []).join(", ") + ((entry.registration_count || 0) > (entry.registrations || []).length ? ` +${entry.registration_count - entry.registrations.length}` : "")),
      h("td", {}, h("span.status." + kind, {}, status === 0 ? "dropped" : status)), h("td", {}, entry.latency_ms));
  }
  async function load(reset) {
    try {
      const page = await api("GET", "/requests" + query({ ...current(), after: reset ? undefined : last, limit: keep }));
      if (reset) body.replaceChildren();
      for (const entry of page.requests) body.prepend(row(entry));
      while (body.children.length > keep) body.lastChild.remove();
      last = Math.max(last, page.last_seq || 0);
      summary.textContent = `${number(body.children.length)} shown (newest first) · ${number(page.last_seq)} recorded`;
      table.dataset.ready = "true";
    } catch (error) { summary.textContent = error.message; }
  }
  function restart() {
    last = 0;
    const shown = { ...current(), live: live.checked ? undefined : "0" };
    history.replaceState(null, "", link("requests", undefined, shown));
    load(true);
  }
  for (const control of Object.values(filters)) control.addEventListener("change", restart);
  filters.path.addEventListener("input", restart);
  live.addEventListener("change", restart);
  clearInterval(tailTimer);
  tailTimer = setInterval(() => { if (live.checked && document.visibilityState === "visible") load(false); }, 1000);
  container.replaceChildren(
    h("div.toolbar", {}, filters.method, filters.path, filters.status, filters.registration,
      h("label.check", {}, live, " Live tail"), h("button", { type: "button", onclick: restart }, "Refresh")),
    h("p.muted.small", {}, "Registrations in paths are redacted, as in the log file; filter by a whole token to find its requests."),
    table, h("div.pager", {}, summary));
  load(true);
};

views.controls = async (container) => {
  container.replaceChildren(h("p.muted", {}, "Loading…"));
  let faults;
  let quotas;
  let clock;
  try {
    [faults, quotas, clock] = await Promise.all([api("GET", "/faults"), api("GET", "/quotas"), api("GET", "/clock")]);
  } catch (error) { return failure(container, error); }
  container.replaceChildren(faultPanel(faults), quotaPanel(quotas), clockPanel(clock), statePanel());
};

function field(label, control, hint) {
  return h("label.field", {}, h("span", {}, label), control, hint ? h("small.muted", {}, hint) : null);
}

function faultPanel(faults) {
  const latency = h("input", { id: "fault-latency", type: "number", min: 0, step: "any", value: faults.latency_ms || 0 });
  const jitter = h("input", { id: "fault-jitter", type: "number", min: 0, step: "any", value: faults.jitter_ms || 0 });
  const drop = h("input", { id: "fault-drop-rate", type: "number", min: 0, max: 1, step: "any", value: faults.drop_rate || 0 });
  const retryAfter = h("input", { id: "fault-retry-after", type: "number", min: 0, step: 1, value: faults.retry_after_seconds ?? "" });
  const html = h("input", { id: "fault-html", type: "checkbox", checked: !!faults.html_errors });
  const rates = h("tbody", { id: "error-rates" });
  function rateRow(rate) {
    const endpoint = h("select.rate-endpoint", { "aria-label": "Endpoint" }, h("option", { value: "" }, "every FCM endpoint"), ENDPOINTS.map((e) => h("option", { value: e }, e)));
    endpoint.value = rate.endpoint || "";
    const status = h("input.rate-status", { type: "number", min: 100, max: 599, value: rate.status ?? 503, "aria-label": "HTTP status" });
    const code = h("select.rate-code", { "aria-label": "FcmError code" }, h("option", { value: "" }, "none"), FCM_ERROR_CODES.map((c) => h("option", { value: c }, c)));
    code.value = rate.fcm_error_code || "";
    const share = h("input.rate-rate", { type: "number", min: 0, max: 1, step: "any", value: rate.rate ?? 0.5, "aria-label": "Rate" });
    const tr = h("tr", {}, h("td", {}, endpoint), h("td", {}, status), h("td", {}, code), h("td", {}, share),
      h("td", {}, h("button", { type: "button", onclick: () => tr.remove() }, "Remove")));
    return tr;
  }
  for (const rate of faults.error_rates || []) rates.append(rateRow(rate));
  const failing = h("textarea", { id: "fault-failing", rows: 2, placeholder: "one a line: REGISTRATION=503 or REGISTRATION=SENDER_ID_MISMATCH" });
  failing.value = Object.entries(faults.failing_registrations || {}).map(([id, fault]) =>
    `${id}=${typeof fault === "object" ? (fault.fcm_error_code || fault.status) : fault}`).join("\n");
  const current = h("pre.raw.small", { id: "faults-current" }, JSON.stringify(faults, null, 1));

  function collect() {
    const failingRegistrations = {};
    for (const line of failing.value.split("\n").map((l) => l.trim()).filter(Boolean)) {
      const at = line.lastIndexOf("=");
      const id = at < 0 ? line : line.slice(0, at);
      const what = at < 0 ? "500" : line.slice(at + 1);
      failingRegistrations[id] = /^\d+$/.test(what) ? Number(what) : what;
    }
    const settings = {
      latency_ms: Number(latency.value || 0), jitter_ms: Number(jitter.value || 0), drop_rate: Number(drop.value || 0),
      html_errors: html.checked, failing_registrations: failingRegistrations,
      error_rates: [...rates.children].map((tr) => {
        const rate = { status: Number(tr.querySelector(".rate-status").value), rate: Number(tr.querySelector(".rate-rate").value) };
        const endpoint = tr.querySelector(".rate-endpoint").value;
        const code = tr.querySelector(".rate-code").value;
        if (endpoint) rate.endpoint = endpoint;
        if (code) rate.fcm_error_code = code;
        return rate;
      }),
    };
    if (retryAfter.value !== "") settings.retry_after_seconds = Number(retryAfter.value);
    return settings;
  }
  async function save(settings) {
    try {
      const saved = await api("PUT", "/faults", settings);
      current.textContent = JSON.stringify(saved, null, 1);
      notice("Faults applied.");
    } catch (error) { notice(error.message, "bad"); }
  }
  return h("section.panel", { id: "faults" }, h("h2", {}, "Faults"),
    h("p.muted.small", {}, "Injected into FCM requests (not the admin API). With --seed and a serial client, the same requests fail every run."),
    h("div.fields", {}, field("Latency (ms)", latency), field("Jitter (ms)", jitter), field("Drop rate (0–1)", drop, "cut the connection mid-response"),
      field("Retry-After (s)", retryAfter, "on injected 429/503"), h("label.check", {}, html, " Errors as HTML pages")),
    h("h3", {}, "Error rates"),
    h("table.grid.compact", {}, h("thead", {}, h("tr", {}, ["Endpoint", "Status", "FcmError code", "Rate", ""].map((c) => h("th", {}, c)))), rates),
    h("div.toolbar", {},
      h("button", { type: "button", id: "add-error-rate", onclick: () => rates.append(rateRow({})) }, "Add an error rate"),
      h("button", { type: "button", id: "add-503", onclick: () => rates.append(rateRow({ status: 503, rate: 0.5 })) }, "Add 503 on half the requests")),
    field("Failing registrations", failing),
    h("div.toolbar", {},
      h("button.primary", { type: "button", id: "apply-faults", onclick: () => save(collect()) }, "Apply faults"),
      h("button", { type: "button", id: "clear-faults", onclick: () => { rates.replaceChildren(); failing.value = ""; latency.value = 0; jitter.value = 0; drop.value = 0; html.checked = false; retryAfter.value = ""; save({}); } }, "Clear all faults")),
    h("details", {}, h("summary", {}, "In force"), current));
}

function quotaPanel(quotas) {
  const qps = h("input", { id: "quota-qps", type: "number", min: 0, step: "any", value: quotas.subscription_qps });
  const perMinute = h("input", { id: "quota-messages", type: "number", min: 0, step: "any", value: quotas.messages_per_minute });
  const retryAfter = h("input", { id: "quota-retry-after", type: "number", min: 0, step: 1, value: quotas.retry_after_seconds ?? "" });
  return h("section.panel", { id: "quotas" }, h("h2", {}, "Quotas"),
    h("div.fields", {}, field("Subscription changes / s", qps, "FCM: 3,000; 0 = off"), field("Messages / min", perMinute, "FCM: 600,000; 0 = off"),
      field("Retry-After (s)", retryAfter)),
    h("div.toolbar", {}, h("button.primary", {
      type: "button", id: "apply-quotas",
      onclick: async () => {
        const settings = { subscription_qps: Number(qps.value), messages_per_minute: Number(perMinute.value) };
        if (retryAfter.value !== "") settings.retry_after_seconds = Number(retryAfter.value);
        try { await api("PUT", "/quotas", settings); notice("Quotas applied."); } catch (error) { notice(error.message, "bad"); }
      },
    }, "Apply quotas")));
}

function clockPanel(clock) {
  const now = h("input", { id: "clock-now", type: "text", placeholder: "2027-09-30 or 2027-09-30T12:00:00Z", value: clock.fixed ? clock.now : "" });
  const newProject = h("input", { id: "clock-new-project", type: "checkbox", checked: !!clock.new_project });
  const shown = h("p", { id: "clock-shown" }, `Now: ${clock.now}${clock.fixed ? " (fixed)" : " (system clock)"}`);
  async function set(value) {
    try {
      const answer = await api("PUT", "/clock", { now: value || null, new_project: newProject.checked });
      shown.textContent = `Now: ${answer.now}${answer.fixed ? " (fixed)" : " (system clock)"}`;
      notice("Clock set.");
    } catch (error) { notice(error.message, "bad"); }
  }
  return h("section.panel", { id: "clock" }, h("h2", {}, "Clock"),
    h("p.muted.small", {}, "From 2027-09-29 the device-group and Instance ID APIs answer as turned down; from 2026-12-01 a new project cannot create groups."),
    shown, h("div.fields", {}, field("Today", now), h("label.check", {}, newProject, " New project")),
    h("div.toolbar", {},
      h("button.primary", { type: "button", id: "apply-clock", onclick: () => set(now.value.trim()) }, "Set the clock"),
      h("button", { type: "button", onclick: () => { now.value = ""; set(""); } }, "Use the system clock")));
}

function statePanel() {
  const file = h("input", { id: "import-file", type: "file", accept: "application/json,.json" });
  return h("section.panel", { id: "state" }, h("h2", {}, "State"),
    h("p.muted.small", {}, "An export holds registrations with their projects, subscriptions, groups, sender links, inboxes and the clock; start another emulator with --import DIR to load it."),
    h("div.toolbar", {},
      h("a.button", { href: API + "/export?download=1", id: "export-link", download: "fcm-emulator-export.json" }, "Export"),
      file,
      h("button", {
        type: "button", id: "import-button",
        onclick: async () => {
          if (!file.files.length) return notice("Choose an export file first.", "bad");
          try {
            const answer = await api("POST", "/import", await file.files[0].text());
            notice(`Imported ${number(answer.registrations)} registrations, ${number(answer.subscriptions)} subscriptions, ${number(answer.groups)} groups.`);
            refreshStats();
          } catch (error) { notice(error.message, "bad"); }
        },
      }, "Import"),
      h("button", {
        type: "button", onclick: async () => {
          if (!confirm("Expire every access token the emulator issued?")) return;
          await api("POST", "/tokens:expire"); notice("Tokens expired.");
        },
      }, "Expire tokens"),
      h("button.danger", {
        type: "button", onclick: async () => {
          if (!confirm("Forget every registration, subscription, group and logged request?")) return;
          await api("POST", "/reset"); notice("Reset."); refreshStats();
        },
      }, "Reset")));
}

// ---- frame ----------------------------------------------------------------------------------------------

async function refreshStats() {
  try {
    const stats = await api("GET", "/stats");
    document.getElementById("stats").replaceChildren(
      h("span", {}, h("strong", { id: "stat-registrations" }, number(stats.registrations)), " registrations"),
      h("span", {}, h("strong", { id: "stat-subscriptions" }, number(stats.subscriptions)), " subscriptions"),
      h("span", {}, h("strong", { id: "stat-groups" }, number(stats.groups)), " groups"),
      h("span", {}, h("strong", {}, number(stats.log_entries)), " requests"));
  } catch (_) { /* the next refresh tries again */ }
}

function render() {
  const current = route();
  const view = views[current.name] || views.registrations;
  if (current.name !== "requests") clearInterval(tailTimer);
  const tab = { registration: "registrations", topic: "topics" }[current.name] || current.name;
  for (const a of document.querySelectorAll("#tabs a")) a.classList.toggle("active", a.dataset.view === tab);
  const container = document.getElementById("view");
  container.dataset.view = current.name;
  view(container, current);
}

// Started once every script has run: actions.js, loaded after this file, adds its view first.
window.addEventListener("DOMContentLoaded", () => {
  window.addEventListener("hashchange", render);
  render();
  refreshStats();
  setInterval(() => { if (document.visibilityState === "visible") refreshStats(); }, 5000);
  api("GET", "/health").then((health) => { document.getElementById("version").textContent = health.build; }).catch(() => {});
});

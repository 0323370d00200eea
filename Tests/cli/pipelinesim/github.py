"""A small stand-in for GitHub's REST API: the endpoints the example workflows call through `gh api`, with
the answers' documented shapes (docs.github.com REST reference), pagination by `Link` headers, and the
GITHUB_TOKEN's permissions enforced per job (a workflow missing `pull-requests: write` is refused here as on
GitHub). Also the repository's data the simulator drives: pull requests, issues and their comments, labels,
workflow runs and their jobs.

Endpoints (all under /repos/OWNER/REPO):
  GET   commits/REF                       the commit REF names (sha)
  GET   commits/SHA/pulls                 pull requests whose merge commit or head is SHA
  GET   pulls/N
  GET   actions/workflows/FILE/runs       ?head_sha= &event= &status= &branch= (newest first)
  GET   actions/runs/ID/jobs
  GET   actions/runs/ID/artifacts
  GET   issues                            ?labels= &state= (pull requests included, with a pull_request key, as GitHub does)
  POST  issues                            {title, body, labels}
  GET   issues/N   PATCH issues/N         {title, body, state}
  GET   issues/N/comments  POST issues/N/comments {body}
  PATCH issues/comments/ID                {body}
  GET   labels/NAME   POST labels         {name, color, description}
and, outside the REST API, the job's OIDC token service (what ACTIONS_ID_TOKEN_REQUEST_URL names on a runner):
  GET   /_services/oidc/token?audience=A  with the job's ACTIONS_ID_TOKEN_REQUEST_TOKEN as bearer: {"value": JWT}, the
        job's claims (sub, repository, ref, environment, event_name, …) with `aud` A, signed HS256 with `oidc_key`
        (the workload identity stand-in, pipelinesim/google.py, checks it with the same key)
An issue's or a comment's body over 65,536 characters (code points) is refused with GitHub's 422.
Anything else answers 404 and is recorded in `unknown`, so a test can fail on it."""
import datetime
import http.server
import itertools
import json
import os
import re
import subprocess
import threading
import time
import urllib.parse

from .google import GITHUB_ISSUER, sign_jwt

BOT = {"login": "github-actions[bot]", "id": 41898282, "type": "Bot"}
LEVELS = {"none": 0, "read": 1, "write": 2}
# An issue's or a comment's body: "Body is too long (maximum is 65536 characters)". len() counts code points;
# a body within that is also within the 262,144 bytes (at most 4 a code point) that comments have been measured
# to store, whichever GitHub enforces.
BODY_LIMIT = 65_536


def too_long():
    return 422, {"message": "Validation Failed", "errors": [{"message": f"Body is too long (maximum is {BODY_LIMIT} characters)"}]}, {}


def now():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


class GitHub:
    def __init__(self, repository, origin, oidc_key=None):
        self.repository = repository  # "owner/name"
        self.origin = origin  # the bare git repository standing for github.com/OWNER/NAME
        self.lock = threading.RLock()
        self.numbers = itertools.count(1)  # issues and pull requests share one sequence, as on GitHub
        self.ids = itertools.count(1000)
        self.pulls, self.issues, self.comments, self.labels = {}, {}, {}, {}
        self.runs = []  # dicts shaped like the API's workflow runs, with "jobs" and "artifacts"
        self.tokens = {}  # token -> permissions of the job that holds it
        self.oidc_key = oidc_key or os.urandom(32)
        self.id_token_requests = {}  # ACTIONS_ID_TOKEN_REQUEST_TOKEN -> the job's claims
        self.requests, self.unknown, self.refused = [], [], []
        self.server = None

    # --- the simulator's side ---------------------------------------------------------------------------

    def start(self):
        handler = type("Handler", (Handler,), {"github": self})
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.api_url = f"http://127.0.0.1:{self.server.server_address[1]}"
        return self

    def stop(self):
        if self.server:
            self.server.shutdown()
            self.server.server_close()

    def issue_token(self, permissions):
        token = f"ghs_sim{next(self.ids)}"
        self.tokens[token] = dict(permissions)
        return token

    def revoke(self, token):
        self.tokens.pop(token, None)
        self.id_token_requests.pop(token, None)

    def issue_id_token_request(self, claims):
        """The request token a job with `id-token: write` gets, standing for its CLAIMS."""
        token = f"oidc_sim{next(self.ids)}"
        self.id_token_requests[token] = dict(claims)
        return token

    def id_token(self, request_token, audience):
        """GitHub's OIDC token for the job: (status, answer)."""
        claims = self.id_token_requests.get(request_token)
        if claims is None:
            return 401, {"message": "Bad credentials"}
        now = int(time.time())
        signed = dict(claims, iss=GITHUB_ISSUER, aud=audience or f"https://github.com/{self.repository.split('/')[0]}",
                      iat=now, nbf=now, exp=now + 3600, jti=f"sim-{next(self.ids)}")
        return 200, {"count": 1, "value": sign_jwt(signed, self.oidc_key)}

    def open_pull(self, title, head_ref, head_sha, base_sha, author="octocat"):
        with self.lock:
            number = next(self.numbers)
            pull = {"number": number, "title": title, "state": "open", "user": {"login": author, "type": "User"},
                    "head": {"ref": head_ref, "sha": head_sha}, "base": {"ref": "main", "sha": base_sha},
                    "merged": False, "merged_at": None, "merge_commit_sha": None, "created_at": now(),
                    "html_url": f"https://github.com/{self.repository}/pull/{number}"}
            self.pulls[number] = pull
            self.issues[number] = {"number": number, "title": title, "body": "", "state": "open", "labels": [],
                                   "user": pull["user"], "pull_request": {"url": f"/repos/{self.repository}/pulls/{number}"},
                                   "created_at": now()}
            return pull

    def comments_on(self, number):
        with self.lock:
            return [c for c in sorted(self.comments.values(), key=lambda c: c["id"]) if c["issue_number"] == number]

    def open_issues(self, label=None):
        with self.lock:
            return [i for i in self.issues.values() if "pull_request" not in i and i["state"] == "open"
                    and (label is None or label in [l["name"] for l in i["labels"]])]

    # --- the API ------------------------------------------------------------------------------------------

    def rev_parse(self, ref):
        result = subprocess.run(["git", "--git-dir", self.origin, "rev-parse", "--verify", "--quiet", ref + "^{commit}"],
                                capture_output=True, text=True)
        return result.stdout.strip() or None

    def handle(self, method, path, query, body, token):
        """(status, answer, headers)"""
        self.requests.append((method, path, dict(query)))
        prefix = f"/repos/{self.repository}/"
        if not path.startswith(prefix):
            return self.not_found(method, path)
        rest = path[len(prefix):]
        permissions = self.tokens.get(token)
        if permissions is None:
            return 401, {"message": "Bad credentials", "status": "401"}, {}

        def need(*alternatives):
            """alternatives: (scope, level) pairs; any one suffices"""
            for scope, level in alternatives:
                if LEVELS[permissions.get(scope, "none")] >= LEVELS[level]:
                    return None
            self.refused.append((method, path, alternatives))
            return 403, {"message": "Resource not accessible by integration", "status": "403"}, {}

        with self.lock:
            routes = [
                ("GET", r"commits/([^/]+)/pulls", self.commit_pulls, [("pull-requests", "read"), ("contents", "read")]),
                ("GET", r"commits/([^/]+)", self.commit, [("contents", "read")]),
                ("GET", r"pulls/(\d+)", self.pull, [("pull-requests", "read")]),
                ("GET", r"actions/workflows/([^/]+)/runs", self.workflow_runs, [("actions", "read")]),
                ("GET", r"actions/runs/(\d+)/jobs", self.run_jobs, [("actions", "read")]),
                ("GET", r"actions/runs/(\d+)/artifacts", self.run_artifacts, [("actions", "read")]),
                ("GET", r"issues", self.list_issues, [("issues", "read")]),
                ("POST", r"issues", self.create_issue, [("issues", "write")]),
                ("GET", r"issues/(\d+)/comments", self.list_comments, None),
                ("POST", r"issues/(\d+)/comments", self.create_comment, None),
                ("PATCH", r"issues/comments/(\d+)", self.update_comment, None),
                ("GET", r"issues/(\d+)", self.get_issue, None),
                ("PATCH", r"issues/(\d+)", self.update_issue, [("issues", "write")]),
                ("GET", r"labels/([^/]+)", self.get_label, [("issues", "read"), ("pull-requests", "read")]),
                ("POST", r"labels", self.create_label, [("issues", "write"), ("pull-requests", "write")]),
            ]
            for route_method, pattern, function, scopes in routes:
                match = re.fullmatch(pattern, rest)
                if route_method != method or not match:
                    continue
                if scopes is None:  # an issue's or a pull request's comments: either permission, by what it is
                    number = self.comment_issue(function, match.group(1))
                    is_pull = number in self.pulls
                    level = "read" if method == "GET" else "write"
                    scopes = [("pull-requests" if is_pull else "issues", level)]
                refusal = need(*scopes)
                if refusal:
                    return refusal
                return function(query, body, *[urllib.parse.unquote(g) for g in match.groups()])
            return self.not_found(method, path)

    def comment_issue(self, function, key):
        if function == self.update_comment:
            comment = self.comments.get(int(key))
            return comment["issue_number"] if comment else None
        return int(key)

    def not_found(self, method, path):
        self.unknown.append((method, path))
        return 404, {"message": "Not Found", "status": "404"}, {}

    @staticmethod
    def missing():
        return 404, {"message": "Not Found", "status": "404"}, {}

    def paginated(self, query, items, path):
        per_page = min(int(query.get("per_page", 30)), 100)
        page = int(query.get("page", 1))
        chunk = items[(page - 1) * per_page: page * per_page]
        headers = {}
        if page * per_page < len(items):
            following = dict(query, page=str(page + 1), per_page=str(per_page))
            headers["Link"] = f'<{self.api_url}{path}?{urllib.parse.urlencode(following)}>; rel="next"'
        return chunk, headers

    def commit(self, query, body, ref):
        sha = self.rev_parse(ref)
        return (200, {"sha": sha}, {}) if sha else self.missing()

    def commit_pulls(self, query, body, sha):
        found = [p for p in self.pulls.values() if sha in (p["merge_commit_sha"], p["head"]["sha"])]
        return 200, found, {}

    def pull(self, query, body, number):
        pull = self.pulls.get(int(number))
        return (200, pull, {}) if pull else self.missing()

    def workflow_runs(self, query, body, workflow):
        runs = [r for r in reversed(self.runs) if r["path"].endswith("/" + workflow)]
        for key in ("head_sha", "event"):
            if key in query:
                runs = [r for r in runs if r[key] == query[key]]
        if "branch" in query:
            runs = [r for r in runs if r["head_branch"] == query["branch"]]
        if "status" in query:
            runs = [r for r in runs if query["status"] in (r["status"], r["conclusion"])]
        shown = [{k: v for k, v in r.items() if k not in ("jobs", "artifacts")} for r in runs]
        page, headers = self.paginated(query, shown, f"/repos/{self.repository}/actions/workflows/{workflow}/runs")
        return 200, {"total_count": len(shown), "workflow_runs": page}, headers

    def run_by_id(self, run_id):
        return next((r for r in self.runs if r["id"] == int(run_id)), None)

    def run_jobs(self, query, body, run_id):
        run = self.run_by_id(run_id)
        if not run:
            return self.missing()
        return 200, {"total_count": len(run["jobs"]), "jobs": run["jobs"]}, {}

    def run_artifacts(self, query, body, run_id):
        run = self.run_by_id(run_id)
        if not run:
            return self.missing()
        shown = [{"id": a["id"], "name": a["name"], "expired": False} for a in run["artifacts"].values()]
        return 200, {"total_count": len(shown), "artifacts": shown}, {}

    def list_issues(self, query, body):
        items = sorted(self.issues.values(), key=lambda i: -i["number"])
        state = query.get("state", "open")
        if state != "all":
            items = [i for i in items if i["state"] == state]
        for label in filter(None, query.get("labels", "").split(",")):
            items = [i for i in items if label in [l["name"] for l in i["labels"]]]
        page, headers = self.paginated(query, items, f"/repos/{self.repository}/issues")
        return 200, page, headers

    def create_issue(self, query, body):
        if not body.get("title"):
            return 422, {"message": "Validation Failed", "errors": [{"field": "title", "code": "missing_field"}]}, {}
        if len(body.get("body") or "") > BODY_LIMIT:
            return too_long()
        labels = []
        for name in body.get("labels", []):
            # GitHub's REST API would create an unknown label on the fly; the simulator is stricter so that a
            # workflow that means to create its label itself is seen doing it.
            if name not in self.labels:
                return 422, {"message": f"label {name!r} does not exist (simulator)"}, {}
            labels.append(self.labels[name])
        number = next(self.numbers)
        issue = {"number": number, "title": body["title"], "body": body.get("body", ""), "state": "open", "labels": labels,
                 "user": BOT, "created_at": now(), "updated_at": now(),
                 "html_url": f"https://github.com/{self.repository}/issues/{number}"}
        self.issues[number] = issue
        return 201, issue, {}

    def get_issue(self, query, body, number):
        issue = self.issues.get(int(number))
        return (200, issue, {}) if issue else self.missing()

    def update_issue(self, query, body, number):
        issue = self.issues.get(int(number))
        if not issue:
            return self.missing()
        if len(body.get("body") or "") > BODY_LIMIT:
            return too_long()
        for key in ("title", "body", "state"):
            if key in body:
                issue[key] = body[key]
        issue["updated_at"] = now()
        return 200, issue, {}

    def list_comments(self, query, body, number):
        if int(number) not in self.issues:
            return self.missing()
        page, headers = self.paginated(query, self.comments_on(int(number)), f"/repos/{self.repository}/issues/{number}/comments")
        return 200, page, headers

    def create_comment(self, query, body, number):
        if int(number) not in self.issues:
            return self.missing()
        if not body.get("body"):
            return 422, {"message": "Validation Failed", "errors": [{"field": "body", "code": "missing_field"}]}, {}
        if len(body["body"]) > BODY_LIMIT:
            return too_long()
        comment = {"id": next(self.ids), "issue_number": int(number), "body": body["body"], "user": BOT,
                   "created_at": now(), "updated_at": now(), "edits": 0}
        self.comments[comment["id"]] = comment
        return 201, comment, {}

    def update_comment(self, query, body, comment_id):
        comment = self.comments.get(int(comment_id))
        if not comment:
            return self.missing()
        if len(body.get("body", "")) > BODY_LIMIT:
            return too_long()
        comment["body"] = body["body"]
        comment["updated_at"] = now()
        comment["edits"] += 1
        return 200, comment, {}

    def get_label(self, query, body, name):
        label = self.labels.get(name)
        return (200, label, {}) if label else self.missing()

    def create_label(self, query, body):
        name = body.get("name")
        if not name:
            return 422, {"message": "Validation Failed"}, {}
        if name in self.labels:
            return 422, {"message": "Validation Failed", "errors": [{"resource": "Label", "code": "already_exists", "field": "name"}]}, {}
        self.labels[name] = {"id": next(self.ids), "name": name, "color": body.get("color", "ededed"),
                             "description": body.get("description", "")}
        return 201, self.labels[name], {}


class Handler(http.server.BaseHTTPRequestHandler):
    github = None

    def answer(self, method):
        parsed = urllib.parse.urlsplit(self.path)
        query = dict(urllib.parse.parse_qsl(parsed.query))
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else {}
        except ValueError:
            self.send(400, {"message": "Problems parsing JSON"}, {})
            return
        authorization = self.headers.get("Authorization", "")
        token = authorization.split(" ", 1)[1] if " " in authorization else ""
        if parsed.path == "/_services/oidc/token" and method == "GET":
            status, answer = self.github.id_token(token, query.get("audience"))
            self.send(status, answer, {})
            return
        status, answer, headers = self.github.handle(method, parsed.path, query, body, token)
        self.send(status, answer, headers)

    def send(self, status, answer, headers):
        data = json.dumps(answer).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):  # noqa: N802
        self.answer("GET")

    def do_POST(self):  # noqa: N802
        self.answer("POST")

    def do_PATCH(self):  # noqa: N802
        self.answer("PATCH")

    def do_DELETE(self):  # noqa: N802
        self.answer("DELETE")

    def log_message(self, format, *args):
        pass

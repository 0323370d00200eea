"""Google's side of the pipeline simulator: who may sign in as which service account, and what each service
account may do in the state bucket. Two small HTTP servers in front of the stand-ins the tests already run:

- WorkloadIdentity, in front of fcm-emulator's token services (STS `POST /v1/token`, IAM Credentials
  `POST /v1/projects/-/serviceAccounts/EMAIL:generateAccessToken`): one workload identity pool provider that
  trusts GitHub's OIDC tokens (the GitHub stand-in signs them, HS256 with a key shared here, as GitHub signs
  with the key its JWKS publishes), with the provider's attribute mapping and attribute condition and each
  service account's roles/iam.workloadIdentityUser members, as the gcloud commands of
  examples/github-actions/README.md create them. A token GitHub gave a job is mapped to the job's
  attributes; a generateAccessToken call for a service account whose members do not match them is refused
  with IAM's 403 (`Permission 'iam.serviceAccounts.getAccessToken' denied on resource (or it may not
  exist).`). Accepted calls go on to fcm-emulator, which issues the tokens (so its request log and tokeninfo
  know them).

- StorageProxy, in front of fake-gcs-server (which checks nothing): the Cloud Storage JSON API as IAM guards
  it. It names the caller from the bearer token by asking fcm-emulator's tokeninfo (`GET
  /tokeninfo?access_token=`, whose `azp` is the impersonated account), classifies the request by the
  permission GCS checks for it (storage.objects.get, .list, .create, .delete, .update; the bucket's own
  permissions for anything else) and the object it names, and lets it through only if one of the caller's
  bucket bindings (a predefined role, optionally limited to an object-name prefix, as an IAM condition on
  `resource.name` and `storage.googleapis.com/objectListPrefix` limits it) grants that permission there.
  Otherwise it answers as GCS does: 401 for no or an unknown token, 403 in GCS's JSON error shape naming the
  caller and the permission. Every decision is kept in `log` for the tests.

What these do not model: IAM's propagation delays, deny policies, VPC Service Controls, Google's exact STS
validation of the OIDC token beyond issuer, audience, signature and the attribute condition, and CEL itself
(the mapping and condition are Python functions the tests write to match the documented expressions)."""
import base64
import hashlib
import hmac
import http.client
import http.server
import json
import re
import socket
import threading
import urllib.error
import urllib.parse
import urllib.request

GITHUB_ISSUER = "https://token.actions.githubusercontent.com"
STS_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:access_token"

# The predefined Cloud Storage roles the workflows' identities use, by the object permissions they hold
# (https://cloud.google.com/storage/docs/access-control/iam-roles). None of them holds a bucket permission.
STORAGE_ROLES = {
    "roles/storage.objectViewer": {"storage.objects.get", "storage.objects.list"},
    "roles/storage.objectCreator": {"storage.objects.create"},
    "roles/storage.objectUser": {"storage.objects.get", "storage.objects.list", "storage.objects.create", "storage.objects.delete",
                                 "storage.objects.update", "storage.objects.restore"},
    "roles/storage.objectAdmin": {"storage.objects.get", "storage.objects.list", "storage.objects.create", "storage.objects.delete",
                                  "storage.objects.update", "storage.objects.restore", "storage.objects.getIamPolicy",
                                  "storage.objects.setIamPolicy"},
}


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64url(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def sign_jwt(claims, key):
    """An HS256 JWT: what the GitHub stand-in hands a job for its OIDC token request."""
    header = b64url(json.dumps({"alg": "HS256", "typ": "JWT", "kid": "pipelinesim"}).encode())
    payload = b64url(json.dumps(claims, sort_keys=True).encode())
    signature = hmac.new(key, f"{header}.{payload}".encode(), hashlib.sha256).digest()
    return f"{header}.{payload}.{b64url(signature)}"


def verify_jwt(token, key):
    """The claims of a JWT signed with KEY; None if it is not one."""
    try:
        header, payload, signature = token.split(".")
        expected = hmac.new(key, f"{header}.{payload}".encode(), hashlib.sha256).digest()
        if not hmac.compare_digest(expected, unb64url(signature)):
            return None
        return json.loads(unb64url(payload))
    except (ValueError, TypeError):
        return None


def google_error(code, status, message, permission=None, domain="iam.googleapis.com"):
    """Google's JSON error for its gRPC-transcoded APIs (IAM Credentials): code, message, status, and an ErrorInfo
    naming the permission."""
    error = {"code": code, "message": message, "status": status}
    if permission:
        error["details"] = [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "IAM_PERMISSION_DENIED",
                             "domain": domain, "metadata": {"permission": permission}}]
    return {"error": error}


class Server:
    """A threading HTTP/1.1 server whose handler calls `self.respond(method, path, query, headers, body)` ->
    (status, headers, body bytes)."""

    def start(self):
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # so libcurl's `Expect: 100-continue` is answered at once

            def setup(self):
                super().setup()
                # Headers and body go out in two writes: without this, Nagle's algorithm holds the body until
                # the client's delayed ACK, some 40 ms per answer on a kept-alive connection.
                self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

            def handle_any(self):
                parsed = urllib.parse.urlsplit(self.path)
                body = self.read_body()
                try:
                    status, headers, data = owner.respond(self.command, parsed.path, parsed.query, self.headers, body)
                except Exception as error:  # a bug of the stand-in: visible, never a hang
                    status, headers, data = 500, {"Content-Type": "text/plain"}, f"pipelinesim: {error!r}".encode()
                self.send_response(status)
                sent = set()
                for name, value in headers.items():
                    if name.lower() in ("content-length", "transfer-encoding", "connection"):
                        continue
                    self.send_header(name, value)
                    sent.add(name.lower())
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)

            def read_body(self):
                if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                    chunks = []
                    while True:
                        size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                        if size == 0:
                            while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                                pass
                            return b"".join(chunks)
                        chunks.append(self.rfile.read(size))
                        self.rfile.readline()
                length = int(self.headers.get("Content-Length") or 0)
                return self.rfile.read(length) if length else b""

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = handle_any  # noqa: N815

            def log_message(self, format, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"
        return self

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


def forward(base, method, path, query, headers, body, drop=("host", "content-length", "transfer-encoding", "connection", "expect")):
    """The request sent on to BASE; (status, headers, body) of its answer."""
    target = urllib.parse.urlsplit(base)
    connection = http.client.HTTPConnection(target.hostname, target.port, timeout=120)
    try:
        sent = {k: v for k, v in headers.items() if k.lower() not in drop}
        if body or method in ("POST", "PUT", "PATCH"):
            sent["Content-Length"] = str(len(body))
        connection.request(method, path + (f"?{query}" if query else ""), body=body or None, headers=sent)
        response = connection.getresponse()
        data = response.read()
        return response.status, dict(response.getheaders()), data
    finally:
        connection.close()


def json_answer(status, document):
    return status, {"Content-Type": "application/json; charset=UTF-8"}, json.dumps(document).encode()


class WorkloadIdentity(Server):
    """One workload identity pool provider for GitHub's OIDC tokens, and the service accounts' workloadIdentityUser
    members.

    provider: projects/NUMBER/locations/global/workloadIdentityPools/POOL/providers/PROVIDER
    mapping: claims -> {"google.subject": …, "attribute.NAME": …} (the provider's --attribute-mapping)
    condition: claims -> bool (the provider's --attribute-condition)
    members: {service account email: [member, …]} with members written as IAM writes them:
      principalSet://iam.googleapis.com/projects/NUMBER/locations/global/workloadIdentityPools/POOL/attribute.NAME/VALUE
      principal://iam.googleapis.com/projects/NUMBER/locations/global/workloadIdentityPools/POOL/subject/VALUE
      principalSet://iam.googleapis.com/projects/NUMBER/locations/global/workloadIdentityPools/POOL/*"""

    def __init__(self, emulator, accepted_subject, provider, key, mapping, condition, members):
        self.emulator, self.accepted_subject, self.provider, self.key = emulator, accepted_subject, provider, key
        self.mapping, self.condition, self.members = mapping, condition, {k: list(v) for k, v in members.items()}
        self.pool = provider.split("/providers/")[0]
        self.federated = {}  # federated access token -> attributes
        self.log = []  # {"kind": "sts"|"impersonate", "account", "attributes", "allowed", "reason"}
        self.lock = threading.Lock()

    def respond(self, method, path, query, headers, body):
        if method == "POST" and path == "/v1/token":
            return self.exchange(body)
        match = re.fullmatch(r"/v1/projects/-/serviceAccounts/([^/:]+):generateAccessToken", path)
        if method == "POST" and match:
            return self.impersonate(urllib.parse.unquote(match.group(1)), path, query, headers, body)
        return json_answer(404, google_error(404, "NOT_FOUND", f"pipelinesim: {method} {path} is not modelled"))

    def exchange(self, body):
        form = dict(urllib.parse.parse_qsl(body.decode()))
        audience = form.get("audience", "")

        def refuse(error, description):
            with self.lock:
                self.log.append({"kind": "sts", "account": None, "attributes": None, "allowed": False, "reason": description})
            return json_answer(400, {"error": error, "error_description": description})

        if audience != f"//iam.googleapis.com/{self.provider}":
            return refuse("invalid_target", f"The target service indicated by the \"audience\" parameters is invalid: {audience}")
        claims = verify_jwt(form.get("subject_token", ""), self.key)
        if claims is None:
            return refuse("invalid_grant", "Invalid JWT signature.")
        if claims.get("iss") != GITHUB_ISSUER:
            return refuse("invalid_grant", f"The issuer {claims.get('iss')!r} does not match the provider's issuer.")
        if claims.get("aud") != f"https://iam.googleapis.com/{self.provider}":
            return refuse("invalid_grant", "The audience in ID Token does not match the expected audience.")
        if not self.condition(claims):
            return refuse("unauthorized_client", "The given credential is rejected by the attribute condition.")
        forwarded = dict(form, subject_token=self.accepted_subject)
        status, headers, data = forward(self.emulator, "POST", "/v1/token", "", {"Content-Type": "application/x-www-form-urlencoded"},
                                        urllib.parse.urlencode(forwarded).encode())
        if status == 200:
            with self.lock:
                self.federated[json.loads(data)["access_token"]] = self.mapping(claims)
        return status, {"Content-Type": headers.get("Content-Type", "application/json")}, data

    def matches(self, member, attributes):
        if member == f"principalSet://iam.googleapis.com/{self.pool}/*":
            return True
        subject = f"principal://iam.googleapis.com/{self.pool}/subject/"
        if member.startswith(subject):
            return attributes.get("google.subject") == member[len(subject):]
        prefix = f"principalSet://iam.googleapis.com/{self.pool}/attribute."
        if member.startswith(prefix):
            name, _, value = member[len(prefix):].partition("/")
            return attributes.get(f"attribute.{name}") == value
        return False

    def impersonate(self, account, path, query, headers, body):
        token = headers.get("Authorization", "").partition(" ")[2]
        with self.lock:
            attributes = self.federated.get(token)
        if attributes is None:
            # Not a federated token of this pool: IAM Credentials answers 401 for a token it cannot use, and 403
            # when the caller is someone else without the permission. The workflows only ever come federated.
            with self.lock:
                self.log.append({"kind": "impersonate", "account": account, "attributes": None, "allowed": False,
                                 "reason": "not a federated token of the pool"})
            return json_answer(403, google_error(
                403, "PERMISSION_DENIED", "Permission 'iam.serviceAccounts.getAccessToken' denied on resource (or it may not exist).",
                "iam.serviceAccounts.getAccessToken"))
        allowed = any(self.matches(member, attributes) for member in self.members.get(account, []))
        with self.lock:
            self.log.append({"kind": "impersonate", "account": account, "attributes": attributes, "allowed": allowed,
                             "reason": "a roles/iam.workloadIdentityUser member matches" if allowed else "no member matches"})
        if not allowed:
            return json_answer(403, google_error(
                403, "PERMISSION_DENIED", "Permission 'iam.serviceAccounts.getAccessToken' denied on resource (or it may not exist).",
                "iam.serviceAccounts.getAccessToken"))
        status, answer_headers, data = forward(self.emulator, "POST", path, query, headers, body)
        return status, {"Content-Type": answer_headers.get("Content-Type", "application/json")}, data


class StorageProxy(Server):
    """The Cloud Storage JSON API of one project's buckets, with IAM in front of fake-gcs-server.

    bindings: [(service account email, role, object-name prefix or None)]: a role on the bucket, limited to
    objects under the prefix (and to listings whose prefix is under it) when one is given.
    tokeninfo: the URL of fcm-emulator's tokeninfo endpoint."""

    def __init__(self, upstream, tokeninfo, bindings):
        self.upstream, self.tokeninfo = upstream, tokeninfo
        self.bindings = list(bindings)
        self.principals = {}  # access token -> email (or None: not a token anyone issued)
        self.uploads = {}  # resumable upload id -> (email, bucket, object)
        self.log = []  # {"caller", "method", "path", "permission", "bucket", "object", "allowed"}
        self.unmodelled = []
        self.lock = threading.Lock()

    # --- who is calling -------------------------------------------------------------------------------------

    def caller(self, headers):
        """The email of the account the bearer token stands for: '' for no token, None for one nobody issued."""
        authorization = headers.get("Authorization", "")
        if not authorization.startswith("Bearer "):
            return ""
        token = authorization[len("Bearer "):].strip()
        with self.lock:
            if token in self.principals:
                return self.principals[token]
        try:
            with urllib.request.urlopen(f"{self.tokeninfo}?access_token={urllib.parse.quote(token, safe='')}", timeout=30) as response:
                info = json.load(response)
            # Google's tokeninfo names a service account's token by `email` (and `azp`); fcm-emulator's by `azp`,
            # written as IAM writes members (serviceAccount:EMAIL) or as the address alone.
            principal = info.get("email") or info.get("azp") or ""
            email = principal.split(":", 1)[1] if principal.startswith("serviceAccount:") else principal
            email = email if "@" in email else None
        except urllib.error.HTTPError:
            email = None
        with self.lock:
            self.principals[token] = email
        return email

    # --- what it asks for -----------------------------------------------------------------------------------

    def exists(self, bucket, name):
        status, _, _ = forward(self.upstream, "GET", f"/storage/v1/b/{urllib.parse.quote(bucket, safe='')}/o/{urllib.parse.quote(name, safe='')}",
                               "", {}, b"")
        return status == 200

    @staticmethod
    def multipart_name(headers, body):
        """The object name in a multipart upload's first (JSON metadata) part."""
        match = re.search(r'boundary="?([^";]+)"?', headers.get("Content-Type", ""))
        if not match:
            return None
        parts = body.split(b"--" + match.group(1).encode())
        for part in parts[1:2]:
            head, _, content = part.partition(b"\r\n\r\n")
            try:
                return json.loads(content.strip().decode()).get("name")
            except (ValueError, UnicodeDecodeError):
                return None
        return None

    def classify(self, method, path, query, headers, body):
        """[(permission, bucket, object or None, list prefix or None)] the request needs, or None if not modelled."""
        q = dict(urllib.parse.parse_qsl(query))
        unquote = urllib.parse.unquote
        m = re.fullmatch(r"/(?:download/)?storage/v1/b/([^/]+)/o/([^/]+)", path)
        if m:
            bucket, name = unquote(m.group(1)), unquote(m.group(2))
            permission = {"GET": "storage.objects.get", "HEAD": "storage.objects.get", "DELETE": "storage.objects.delete",
                          "PATCH": "storage.objects.update", "PUT": "storage.objects.update"}.get(method)
            return [(permission, bucket, name, None)] if permission else None
        m = re.fullmatch(r"/storage/v1/b/([^/]+)/o", path)
        if m and method == "GET":
            return [("storage.objects.list", unquote(m.group(1)), None, q.get("prefix", ""))]
        m = re.fullmatch(r"/storage/v1/b/([^/]+)/o/([^/]+)/(?:copyTo|rewriteTo)/b/([^/]+)/o/([^/]+)", path)
        if m and method == "POST":
            source, target = (unquote(m.group(1)), unquote(m.group(2))), (unquote(m.group(3)), unquote(m.group(4)))
            needs = [("storage.objects.get", *source, None), ("storage.objects.create", *target, None)]
            if self.exists(*target):
                needs.append(("storage.objects.delete", *target, None))
            return needs
        m = re.fullmatch(r"/storage/v1/b/([^/]+)/o/([^/]+)/compose", path)
        if m and method == "POST":
            bucket, name = unquote(m.group(1)), unquote(m.group(2))
            needs = [("storage.objects.create", bucket, name, None)]
            try:
                needs += [("storage.objects.get", bucket, s.get("name"), None) for s in json.loads(body or b"{}").get("sourceObjects", [])]
            except ValueError:
                pass
            if self.exists(bucket, name):
                needs.append(("storage.objects.delete", bucket, name, None))
            return needs
        m = re.fullmatch(r"/upload/storage/v1/b/([^/]+)/o", path)
        if m and method in ("POST", "PUT"):
            bucket = unquote(m.group(1))
            kind = q.get("uploadType", "")
            if kind == "resumable" and "upload_id" in q:
                with self.lock:
                    session = self.uploads.get(q["upload_id"])
                return [("storage.objects.create", session[1], session[2], None)] if session else None
            if kind == "media":
                name = q.get("name")
            elif kind == "multipart":
                name = q.get("name") or self.multipart_name(headers, body)
            elif kind == "resumable":
                try:
                    name = q.get("name") or json.loads(body or b"{}").get("name")
                except ValueError:
                    name = None
            else:
                return None
            if not name:
                return None
            needs = [("storage.objects.create", bucket, name, None)]
            # Replacing an object deletes the old generation: GCS checks storage.objects.delete too (a
            # condition ifGenerationMatch=0 says there is none to replace).
            if q.get("ifGenerationMatch") != "0" and self.exists(bucket, name):
                needs.append(("storage.objects.delete", bucket, name, None))
            return needs
        # The bucket itself, its IAM policy, other buckets: the bucket permissions, which no object role holds.
        m = re.fullmatch(r"/storage/v1/b/([^/]+)(/iam(?:/testPermissions)?)?", path)
        if m:
            bucket = unquote(m.group(1))
            if m.group(2):
                permission = "storage.buckets.getIamPolicy" if method == "GET" else "storage.buckets.setIamPolicy"
            else:
                permission = {"GET": "storage.buckets.get", "PATCH": "storage.buckets.update", "PUT": "storage.buckets.update",
                              "DELETE": "storage.buckets.delete"}.get(method)
            return [(permission, bucket, None, None)] if permission else None
        if path == "/storage/v1/b":
            return [("storage.buckets.list" if method == "GET" else "storage.buckets.create", None, None, None)]
        return None

    def grants(self, email, permission, bucket, name, prefix):
        for member, role, limit in self.bindings:
            if member != email or permission not in STORAGE_ROLES.get(role, set()):
                continue
            if limit is None:
                return True
            if name is not None and name.startswith(limit):
                return True
            if permission == "storage.objects.list" and prefix is not None and prefix.startswith(limit):
                return True
        return False

    # --- the answer -----------------------------------------------------------------------------------------

    def respond(self, method, path, query, headers, body):
        needs = self.classify(method, path, query, headers, body)
        if needs is None:
            with self.lock:
                self.unmodelled.append((method, path, query))
            return json_answer(501, {"error": {"code": 501, "message": f"pipelinesim: {method} {path}?{query} is not modelled by the storage proxy"}})
        email = self.caller(headers)
        for permission, bucket, name, prefix in needs:
            kind = "object" if name is not None else "bucket"
            entry = {"caller": email, "method": method, "path": path, "permission": permission, "bucket": bucket, "object": name,
                     "prefix": prefix, "allowed": False}
            if email == "":
                message = (f"Anonymous caller does not have {permission} access to the Google Cloud Storage {kind}. "
                           f"Permission '{permission}' denied on resource (or it may not exist).")
                with self.lock:
                    self.log.append(entry)
                return json_answer(401, {"error": {"code": 401, "message": message, "errors": [
                    {"message": message, "domain": "global", "reason": "required", "locationType": "header", "location": "Authorization"}]}})
            if email is None:
                with self.lock:
                    self.log.append(entry)
                return json_answer(401, {"error": {"code": 401, "message": "Invalid Credentials", "errors": [
                    {"message": "Invalid Credentials", "domain": "global", "reason": "authError", "locationType": "header",
                     "location": "Authorization"}]}})
            if not self.grants(email, permission, bucket, name, prefix):
                message = (f"{email} does not have {permission} access to the Google Cloud Storage {kind}. "
                           f"Permission '{permission}' denied on resource (or it may not exist).")
                with self.lock:
                    self.log.append(entry)
                return json_answer(403, {"error": {"code": 403, "message": message, "errors": [
                    {"message": message, "domain": "global", "reason": "forbidden"}]}})
            entry["allowed"] = True
            with self.lock:
                self.log.append(entry)
        status, answer_headers, data = forward(self.upstream, method, path, query, headers, body)
        location = answer_headers.get("Location") or answer_headers.get("location")
        if location:
            # A resumable session: its upload id names the object and the caller, and its URL is this proxy's.
            parsed = urllib.parse.urlsplit(location)
            upload = dict(urllib.parse.parse_qsl(parsed.query)).get("upload_id")
            if upload and needs:
                with self.lock:
                    self.uploads[upload] = (email, needs[0][1], needs[0][2])
            answer_headers = {k: v for k, v in answer_headers.items() if k.lower() != "location"}
            answer_headers["Location"] = self.base + parsed.path + (f"?{parsed.query}" if parsed.query else "")
        return status, answer_headers, data

    # --- for the tests --------------------------------------------------------------------------------------

    def writes(self, allowed=True):
        """The log's entries that asked to change an object (create, delete, update), allowed or refused."""
        changing = {"storage.objects.create", "storage.objects.delete", "storage.objects.update"}
        with self.lock:
            return [e for e in self.log if e["permission"] in changing and e["allowed"] == allowed]

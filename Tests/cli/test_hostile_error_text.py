"""Error text from the server is printed escaped: a message carrying a newline and a GitHub workflow command,
an ESC sequence and a BEL must not forge `::error::` / `::add-mask::` lines in a CI log or drive a terminal."""
import http.server
import json
import os
import threading

import pytest

from fcmharness import ROOT, run

HOSTILE = "refused\n::error file=.github/workflows/x.yml::forged\n::add-mask::\u001b[2J\u0007"
QUICKSTART = os.path.join(ROOT, "examples/quickstart")


@pytest.fixture
def hostile_server():
    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def answer(self):
            length = int(self.headers.get("Content-Length") or 0)
            if length:
                self.rfile.read(length)
            body = json.dumps({"error": {"code": 400, "message": HOSTILE, "status": "FAILED_PRECONDITION\n::error::code"}}).encode()
            self.send_response(400)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = do_PATCH = do_DELETE = answer

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


@pytest.mark.parametrize("command", [["plan"], ["plan", "--format", "github"], ["plan", "--format", "json"], ["drift"],
                                     ["apply", "--auto-approve"]])
def test_error_text_from_the_server_is_escaped(hostile_server, tmp_path, command):
    result = run([*command, "-f", QUICKSTART, "--state", str(tmp_path / "state.json")],
                 env={"FCM_ENDPOINT": hostile_server, "FCM_ACCESS_TOKEN": "t", "HOME": str(tmp_path)})
    output = result.stdout + result.stderr
    assert result.returncode != 0
    assert "refused" in output, output  # the message is shown...
    assert "\u001b" not in output and "\u0007" not in output  # ...without its control characters
    for line in output.splitlines():
        assert not line.startswith("::error file=.github"), line
        assert not line.startswith("::add-mask::"), line
        assert not line.startswith("::error::code"), line

#!/usr/bin/env python3
"""Loopback HTTP fixture for FleetAuth's tests: a token backend that mints RS256-signed
JWTs in several response shapes, a fleet service that checks bearer tokens the way the
real one does (signature included), and the transport conformance routes.

Run by the tests themselves: it binds 127.0.0.1 on a free port, prints "PORT <n>", and
exits when its standard input closes (when the test process ends). Standard library only.
To run it by hand for a while, keep its input open: `python3 loopback_server.py < <(sleep 600)`.

Routes: /token/{shape} (a token in that response shape), /token/driver/{vehicleId} and
/token/delivery_driver/{vehicleId} (the platform's two sample backends' routes),
/v1/providers/{project}/{collection}/{id} (the fleet service), /conformance/... (the
transport conformance suite and hostile answers: redirect-elsewhere/{status}/{key} points at
the fixture's second port, another origin of the same host, which counts what reaches it
as `elsewhere-<key>` and `elsewhere-credential-<key>`; gzip?mib=N; chunked-endless[?mib=N];
echo-401), GET /fixture/tls-port (the port of a third listener that speaks TLS with a
self-signed certificate, test-only: a backend whose certificate no device trusts), and GET
/stats: a JSON object
of counts since the server started (token requests under the shape's name, such as
`jwt-expiration-timestamp`; fleet calls as `fleet-accepted-<id>` and `fleet-rejected-<id>`),
never reset.
"""
import base64, hashlib, http.server, json, os, ssl, sys, threading, time, urllib.parse, zlib

# A test-only 1024-bit RSA key, generated for this fixture. It signs nothing outside these tests.
# 1024 bits, not 2048, so that the fixture keeps up with a fleet simulator: Python signs with
# it in about 2 ms, against 11 ms for 2048 bits (2,000 vehicles starting at once wait 4 s for
# their tokens, not 23 s). RS256 is the same algorithm at either size.
N = 0xc0f7456a777e66200b8156a7aa7b0ad2f26425eaef4d3443bd68fe3c4b2eeb8f033ed40bcc09aabfafa0be8b92593fb8bd9751779ae4e80f9f42aa576376b10c474a772b297b76cafe754612b3a7b3f5428001fba0686dfe8c8094bb0e8ddabf1398d54933eb948d2120201263bcc099698b1357d9c86121d9448e27dfc03545
E = 65537
D = 0xba9d6850728797145e8c12d5cb957afe4ed473a7250eb100e1e8ec163b4f8117a9b7d532237d25d8836d1d59b58b0289133187e3f7b47088cb2899bc31c0d3aeb0e9119eb5b34441f82776449bb0ca13c1c056abfb165a6ddd6c7464b99572a7a34555f8044a4e6199dfa062b305c864a261893a77801795d0ec66640b591501
KEY_ID = "loopback-test-key-2"
ACCOUNT = "fleet-token-minter@loopback-project.iam.gserviceaccount.com"
AUDIENCE = "https://fleetengine.googleapis.com/"  # the fleet service's audience, FleetAuth's default
SHA256_PREFIX = bytes.fromhex("3031300d060960864801650304020105000420")


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _primes(n, e, d):
    """The key's two primes, recovered from n, e and d (the usual randomized method, here
    with fixed bases): signing with them (CRT) is about 3 times faster than with d alone,
    which matters when a parallel test run asks for hundreds of tokens at once."""
    k = d * e - 1
    t = 0
    while k % 2 == 0:
        k //= 2
        t += 1
    for g in range(2, 1000):
        x = pow(g, k, n)
        for _ in range(t):
            y = x * x % n
            if y == 1 and x not in (1, n - 1):
                p = __import__("math").gcd(x - 1, n)
                return p, n // p
            x = y
    raise ValueError("no factor found")


P, Q = _primes(N, E, D)
DP, DQ, QINV = D % (P - 1), D % (Q - 1), pow(Q, -1, P)


def sign_rs256(message):
    """RSASSA-PKCS1-v1_5 with SHA-256 (CRT)."""
    digest = SHA256_PREFIX + hashlib.sha256(message).digest()
    size = (N.bit_length() + 7) // 8
    padded = b"\x00\x01" + b"\xff" * (size - len(digest) - 3) + b"\x00" + digest
    m = int.from_bytes(padded, "big")
    m1, m2 = pow(m, DP, P), pow(m, DQ, Q)
    return (m2 + Q * (QINV * (m1 - m2) % P)).to_bytes(size, "big")


def verify_rs256(token):
    """True when the token's signature is valid under the fixture's key."""
    try:
        head, payload, signature = token.split(".")
        sig = base64.urlsafe_b64decode(signature + "=" * (-len(signature) % 4))
        size = (N.bit_length() + 7) // 8
        recovered = pow(int.from_bytes(sig, "big"), E, N).to_bytes(size, "big")
        digest = SHA256_PREFIX + hashlib.sha256(f"{head}.{payload}".encode()).digest()
        return recovered.endswith(b"\x00" + digest) and recovered.startswith(b"\x00\x01")
    except Exception:
        return False


def mint(claim_key, object_id, lifetime, now, options=None):
    """A signed token; `options` (query items) can break it on purpose: alg, aud (another
    audience), noKid, noAud, noIss, noIat, noExp; taskid adds a task claim naming that task."""
    options = options or {}
    header = {"alg": options.get("alg", "RS256"), "typ": "JWT", "kid": KEY_ID}
    payload = {"iss": ACCOUNT, "sub": ACCOUNT, "aud": options.get("aud", AUDIENCE), "iat": int(now),
               "exp": int(now + lifetime), "authorization": {claim_key: object_id}}
    if "taskid" in options:
        payload["authorization"]["taskid"] = options["taskid"]
    for flag, field, container in (("noKid", "kid", header), ("noAud", "aud", payload), ("noIss", "iss", payload),
                                   ("noIat", "iat", payload), ("noExp", "exp", payload)):
        if flag in options:
            container.pop(field, None)
    if "noIss" in options:
        payload.pop("sub", None)
    signing_input = (b64url(json.dumps(header, separators=(",", ":")).encode()) + "." +
                     b64url(json.dumps(payload, separators=(",", ":")).encode()))
    return signing_input + "." + b64url(sign_rs256(signing_input.encode()))


# shape name -> (token key, expiry key, expiry unit) ; None token key means plain text
SHAPES = {
    "token-only": ("token", None, None),
    "swift-sample": ("token", "expiration", "s"),
    "objc-sample": ("token", "expiration", "in"),
    "jwt-expiration-timestamp": ("jwt", "expirationTimestamp", "ms"),
    "expiration-timestamp-ms": ("token", "expiration_timestamp_ms", "ms"),
    "expires-in-seconds": ("token", "expiresInSeconds", "in"),
    "plain": (None, None, None),
    # Key names no preset knows: the checker must infer them.
    "custom-keys": ("accessToken", "expiresAtMillis", "ms"),
}

# The public sample backends' routes: /token/<route>/<id> → (shape, ID query name).
SAMPLE_ROUTES = {
    "driver": ("jwt-expiration-timestamp", "vehicleId"),
    "consumer": ("jwt-expiration-timestamp", "tripId"),
    "delivery_driver": ("expiration-timestamp-ms", "vehicleId"),
    "delivery_consumer": ("expiration-timestamp-ms", "trackingId"),
}

PROVIDER_ID = "loopback-project"
# The app credential the README's quick start sends (its stand-in for a signed-in user's).
APP_CREDENTIAL = "app-credential"

# The fleet service's routes: collection -> (what the ID names, the method FleetAuth calls it
# with, the claim key that must name the ID). A copy of FleetServiceRoute.all in
# FleetAuthFleetService, served at /fixture/fleet-routes; a test fails when the two differ.
FLEET_ROUTES = {
    "vehicles": ("vehicle", "PUT", "vehicleid"),
    "deliveryVehicles": ("vehicle", "PATCH", "deliveryvehicleid"),
    "trips": ("trip", "GET", "tripid"),
    "taskTrackingInfo": ("tracking", "GET", "trackingid"),
}
SKEW_TOLERANCE = 600


def check_bearer(header, claim_key, object_id):
    """(status, reason) for a bearer token, as the fleet service judges it."""
    if not header.startswith("Bearer "):
        return 401, "no bearer token"
    token = header[len("Bearer "):]
    if not verify_rs256(token):
        return 401, "bad signature"
    try:
        payload = json.loads(base64.urlsafe_b64decode(token.split(".")[1] + "=="))
    except ValueError:
        return 401, "malformed token"
    now = time.time()
    if payload.get("aud") != AUDIENCE:
        return 401, "wrong audience"
    exp, iat = payload.get("exp"), payload.get("iat")
    if not isinstance(exp, (int, float)) or not isinstance(iat, (int, float)):
        return 401, "missing exp or iat"
    if exp <= now:
        return 401, "token expired"
    if iat > now + SKEW_TOLERANCE:
        return 401, "token issued in the future"
    if exp - iat > 3600:
        return 401, "lifetime over one hour"
    granted = (payload.get("authorization") or {}).get(claim_key)
    if granted not in (object_id, "*"):
        return 403, "token does not cover this " + claim_key[:-2]
    return 200, None


SCRIPTED = []
GZIP_BOMBS = {}
ELSEWHERE_PORT = 0
COUNTS = {}
LOCK = threading.Lock()


def count(key):
    with LOCK:
        COUNTS[key] = COUNTS.get(key, 0) + 1
        return COUNTS[key]


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Send each answer as soon as it is written. With Nagle's algorithm on, the body written
    # after the headers waits for the client's delayed ACK: 40 ms per request on a kept-alive
    # connection, which capped six connections at 150 requests a second.
    disable_nagle_algorithm = True

    def log_message(self, *args):
        pass  # keep test output clean; tokens are never logged

    def reply(self, status, body=b"", content_type="application/json", headers=None):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        self.route()

    def do_POST(self):
        self.route()

    def do_PUT(self):
        self.route()

    def do_PATCH(self):
        self.route()

    def route(self):
        url = urllib.parse.urlsplit(self.path)
        query = dict(urllib.parse.parse_qsl(url.query))
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        parts = [p for p in url.path.split("/") if p]
        if parts[:1] == ["conformance"]:
            return self.conformance(parts[1:], url, query, body)
        if parts == ["fixture", "tls-port"]:
            return self.reply(200, json.dumps({"port": TLS_PORT}).encode())
        if parts == ["fixture", "fleet-routes"]:
            routes = [{"collection": c, "kind": k, "method": m, "claimKey": key}
                      for c, (k, m, key) in FLEET_ROUTES.items()]
            return self.reply(200, json.dumps(routes).encode())
        if parts[:1] == ["token"] and len(parts) == 2:
            return self.token(parts[1], query, body)
        if parts[:1] == ["token"] and len(parts) == 3 and parts[1] in SAMPLE_ROUTES:
            # The platform's sample backends name the ID in the path. They check no login;
            # this one refuses a credential other than the README's stand-in, so that a
            # wrong one can be told from none.
            credential = self.headers.get("Authorization")
            if credential is not None and credential != "Bearer " + APP_CREDENTIAL:
                return self.reply(401, b'{"error":"unknown app credential"}')
            shape, id_name = SAMPLE_ROUTES[parts[1]]
            query[id_name] = urllib.parse.unquote(parts[2])
            if parts[1].startswith("delivery_"):
                query["fleet"] = "delivery"
            return self.token(shape, query, body)
        if parts[:2] == ["v1", "providers"] and len(parts) == 5:
            return self.fleet(parts[2], parts[3], urllib.parse.unquote(parts[4]), body)
        if parts == ["scripted"] and self.command == "POST":
            return self.script(body)
        if len(parts) == 2 and parts[0] == "scripted":
            return self.scripted(parts[1])
        if parts == ["close-mid-body"]:
            return self.close_mid_body()
        if parts == ["stats"]:
            with LOCK:
                return self.reply(200, json.dumps(COUNTS).encode())
        self.reply(404, b'{"error":"no route"}')

    def conformance(self, parts, url, query, body):
        if parts == ["echo"]:
            echoed = {"method": self.command, "query": url.query,
                      "headers": {k.lower(): v for k, v in self.headers.items()},
                      "body": base64.b64encode(body).decode()}
            return self.reply(200, json.dumps(echoed).encode())
        if len(parts) == 2 and parts[0] == "status":
            status = int(parts[1])
            return self.reply(status, f"status {status}".encode(), "text/plain", {"X-Conformance": "yes"})
        if parts == ["stream"]:
            return self.stream(min(int(query.get("count", "0")), 1 << 25))
        if parts == ["bytes"]:
            return self.reply(200, b"a" * min(int(query.get("count", "0")), 1 << 24), "application/octet-stream")
        if parts == ["redirect"]:
            return self.reply(302, b"", "text/plain", {"Location": "http://elsewhere.invalid/token"})
        if len(parts) == 3 and parts[0] == "redirect-elsewhere":
            # Another origin on the same host: the fixture's second port.
            status, key = int(parts[1]), parts[2]
            target = f"http://127.0.0.1:{ELSEWHERE_PORT}/conformance/elsewhere/{key}"
            return self.reply(status, b"", "text/plain", {"Location": target})
        if len(parts) == 2 and parts[0] == "elsewhere":
            # What a redirect's target saw: it counts every request that reached it.
            count("elsewhere-" + parts[1])
            if self.headers.get("Authorization"):
                count("elsewhere-credential-" + parts[1])
            return self.reply(200, b'{"token": "not-a-jwt"}')
        if parts == ["gzip"]:
            return self.gzip_bomb(min(int(query.get("mib", "1")), 1024))
        if parts == ["chunked-endless"]:
            return self.chunked_endless(limit=int(query.get("mib", "0")) << 20)
        if parts == ["echo-401"]:
            # A backend that refuses and echoes every header it was sent.
            echoed = "; ".join(f"{k}={v}" for k, v in self.headers.items())
            return self.reply(401, json.dumps({"error": "invalid_token", "headers": echoed}).encode())
        if parts == ["redirect-same-host"]:
            return self.reply(302, b"", "text/plain", {"Location": "/token/token-only"})
        if parts == ["hang"]:
            time.sleep(30)
            return self.reply(200, b"")
        self.reply(404, b"")

    def script(self, body):
        """POST /scripted {status, headers, body (base64)} stores an answer; returns its id."""
        answer = json.loads(body)
        with LOCK:
            SCRIPTED.append(answer)
            answer_id = len(SCRIPTED) - 1
        self.reply(200, json.dumps({"id": answer_id}).encode())

    def scripted(self, answer_id):
        """GET /scripted/{id} replays a stored answer byte for byte."""
        with LOCK:
            answer = SCRIPTED[int(answer_id)] if answer_id.isdigit() and int(answer_id) < len(SCRIPTED) else None
        if answer is None:
            return self.reply(404, b"")
        headers = dict(answer.get("headers", {}))
        headers.pop("Date", None)  # the server sends its own
        content_type = headers.pop("Content-Type", "application/octet-stream")
        self.reply(answer["status"], base64.b64decode(answer.get("body", "")), content_type, headers)

    def stream(self, count):
        """`count` bytes in 64 KiB chunks with no Content-Length: the end is the close."""
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        chunk = b"a" * 65536
        try:
            while count > 0:
                self.wfile.write(chunk[:count])
                count -= len(chunk)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client stopped reading: what a capped transport does
        self.close_connection = True

    def gzip_bomb(self, mib):
        """`mib` MiB of zeros, gzip-encoded (about 1 KiB on the wire a MiB), unasked for."""
        with LOCK:
            bomb = GZIP_BOMBS.get(mib)
            if bomb is None:
                packer = zlib.compressobj(9, zlib.DEFLATED, 31)
                zeros = b"\0" * (1 << 20)
                bomb = b"".join(packer.compress(zeros) for _ in range(mib)) + packer.flush()
                GZIP_BOMBS[mib] = bomb
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(bomb)))
        self.end_headers()
        try:
            self.wfile.write(bomb)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def chunked_endless(self, limit):
        """A chunked body that never ends, written as fast as the client reads; with `mib`, one
        that ends after that many MiB: as good as endless against a transport's cap, and its
        drain ends, so that a test's body does not hold the fixture and a core for minutes."""
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        chunk = b"a" * 65536
        framed = b"%x\r\n" % len(chunk) + chunk + b"\r\n"
        sent = 0
        try:
            while not limit or sent < limit:
                self.wfile.write(framed)
                sent += len(chunk)
            self.wfile.write(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass
        self.close_connection = True

    def close_mid_body(self):
        """Promises 1000 bytes, sends 10, and closes the connection."""
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", "1000")
        self.end_headers()
        self.wfile.write(b'{"token": ')
        self.wfile.flush()
        self.close_connection = True
        self.connection.shutdown(2)

    def fleet(self, provider, collection, object_id, body):
        """The fleet service: checks the bearer token, then answers the update or trip."""
        kind, method, claim_key = FLEET_ROUTES.get(collection, (None, None, None))
        if claim_key is None or provider != PROVIDER_ID:
            return self.reply(404, b'{"error":"no such resource"}')
        if not object_id or len(object_id) > 64 or any(c in object_id for c in "/:?,#"):
            return self.reply(400, b'{"error":"the ID breaks the fleet service\'s ID rules"}')
        status, reason = check_bearer(self.headers.get("Authorization", ""), claim_key, object_id)
        count(f"fleet-{'accepted' if status == 200 else 'rejected'}-{object_id}")
        if status != 200:
            return self.reply(status, json.dumps({"error": reason}).encode())
        name = f"providers/{provider}/{collection}/{object_id}"
        if self.command != method:
            return self.reply(405, json.dumps({"error": f"use {method}"}).encode())
        if kind == "vehicle":
            update = json.loads(body or b"{}")
            update["name"] = name
            return self.reply(200, json.dumps(update).encode())
        if kind == "tracking":
            return self.reply(200, json.dumps({"name": name, "trackingId": object_id, "state": "OPEN"}).encode())
        trip = {"name": name, "vehicleId": "loopback-vehicle", "tripStatus": "ENROUTE_TO_PICKUP",
                "remainingDistanceMeters": 4200}
        return self.reply(200, json.dumps(trip).encode())

    def token(self, shape, query, body):
        """/token/{shape}?vehicleId=…|tripId=… ; options: lifetime, fail (first N answers 503
        per key), retryAfter (their Retry-After, 0 unless set), key (counter key), status, wrongId, wildcard, expiryScale, iatOffset (seconds
        added to the minting clock), contentType, pad (bytes of padding), and mint's flags. A vehicle ID
        that starts with `endless-` gets a chunked body that never ends (with mib, after that many MiB)."""
        if body:
            try:
                query.update({k: v for k, v in json.loads(body).items() if isinstance(v, str)})
            except ValueError:
                pass
        key = query.get("key", shape)
        seen = count(key)
        if seen <= int(query.get("fail", "0")):
            return self.reply(503, b'{"error":"try later"}', headers={"Retry-After": query.get("retryAfter", "0")})
        if "status" in query:
            return self.reply(int(query["status"]), b'{"error":"refused"}')
        if shape not in SHAPES:
            return self.reply(404, b'{"error":"unknown shape"}')
        if "vehicleId" in query:
            claim_key = "deliveryvehicleid" if query.get("fleet") == "delivery" else "vehicleid"
            object_id = query["vehicleId"]
        elif "tripId" in query:
            claim_key, object_id = "tripid", query["tripId"]
        elif "trackingId" in query:
            claim_key, object_id = "trackingid", query["trackingId"]
        else:
            return self.reply(400, b'{"error":"name a vehicleId or tripId"}')
        if object_id.startswith("endless-"):
            # A vehicle whose token answer is a body that never ends (or ends after `mib` MiB).
            return self.chunked_endless(limit=int(query.get("mib", "0")) << 20)
        if "wrongId" in query:
            object_id = "someone-else"
        if "wildcard" in query:
            object_id = "*"
        lifetime = int(query.get("lifetime", "3600"))
        now = time.time() + float(query.get("iatOffset", "0"))
        token = mint(claim_key, object_id, lifetime, now, query)
        token_key, expiry_key, unit = SHAPES[shape]
        if token_key is None:
            return self.reply(200, token.encode() + b"\n", query.get("contentType", "application/jwt"))
        answer = {token_key: token}
        if shape == "jwt-expiration-timestamp":
            answer["creationTimestamp"] = int(now * 1000)
        elif shape == "expiration-timestamp-ms":
            answer["creation_timestamp_ms"] = int(now * 1000)
        if "extraExpiration" in query:
            answer["expiration"] = int(query["extraExpiration"])
        if "pad" in query:
            answer["padding"] = "x" * int(query["pad"])
        scale = float(query.get("expiryScale", "1"))
        if unit == "s":
            answer[expiry_key] = int((now + lifetime) * scale)
        elif unit == "ms":
            answer[expiry_key] = int((now + lifetime) * 1000 * scale)
        elif unit == "in":
            answer[expiry_key] = int(lifetime * scale)
        self.reply(200, json.dumps(answer).encode(), query.get("contentType", "application/json"),
                   headers={"Cache-Control": "no-store"})


class Server(http.server.ThreadingHTTPServer):
    # The tests open many connections at once; the default backlog of 5 resets some.
    request_queue_size = 256
    daemon_threads = True


def serve_tls():
    """A third listener that speaks TLS with the fixture's self-signed, test-only certificate
    (for 127.0.0.1): what a backend whose certificate no device trusts looks like. Its port is
    GET /fixture/tls-port."""
    global TLS_PORT
    here = os.path.dirname(os.path.abspath(__file__))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(os.path.join(here, "loopback-tls-cert.pem"), os.path.join(here, "loopback-tls-key.pem"))
    server = Server(("127.0.0.1", 0), Handler)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    TLS_PORT = server.server_address[1]
    threading.Thread(target=server.serve_forever, daemon=True).start()


TLS_PORT = 0


def main():
    global ELSEWHERE_PORT
    server = Server(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    # A second port: another origin on the same host, where redirects point.
    elsewhere = Server(("127.0.0.1", 0), Handler)
    ELSEWHERE_PORT = elsewhere.server_address[1]
    threading.Thread(target=elsewhere.serve_forever, daemon=True).start()
    serve_tls()
    print(f"PORT {server.server_address[1]}", flush=True)
    sys.stdin.read()  # returns at EOF: the test process has gone
    server.shutdown()


if __name__ == "__main__":
    main()

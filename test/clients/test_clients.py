#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Real clients nobody here wrote, configured only through OPENSSL_CONF and
proven to run through chapoly by CHAPOLY_STATS_FILE:

  curl  <- openssl s_server -WWW   TLS 1.3 CHACHA20 suite and TLS 1.2 ECDHE-RSA-CHACHA20
  curl  <- nginx                   both protocol versions
  curl  <- nginx, master and 2 workers as deployed: statistics from the
           config key stats_file (%p), nginx's workers having no environment;
           after `nginx -s quit` each worker that served writes its own line,
           the master and the signalling process none
  python3-cryptography ChaCha20Poly1305, bytes equal to a run without chapoly
  openssl speed -evp chacha20-poly1305 through chapoly
  faults: a flipped bit in a record, a truncated record, a connection dropped
  mid-record; the peer fails cleanly and the server keeps serving.

Everything listens on 127.0.0.1 only, every wait is bounded, every process is
killed at exit. Prints "N passed, N failed" last; exit 0 only if all passed.
Environment (from CTest): CHAPOLY_MODULE, OPENSSL_PROGRAM, CHAPOLY_KERNEL.

Tools: curl, nginx, Debian's python3-cryptography (a pip wheel of cryptography
carries its own OpenSSL and never reaches a provider) and the openssl command.
A missing one skips only the checks that need it; the others still run, and
the test exits 77 (skipped) unless something failed. With
CHAPOLY_REQUIRE_TOOLS=1 (scripts/test-all.sh) a missing tool is a failure.
`test_clients.py --check-tools` only reports what is missing (exit 1 if any).
"""
import grp
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

OPENSSL = os.environ.get("OPENSSL_PROGRAM") or "openssl"
MODULE = os.environ.get("CHAPOLY_MODULE", "")
KERNEL = os.environ.get("CHAPOLY_KERNEL", "")
REQUIRE_TOOLS = os.environ.get("CHAPOLY_REQUIRE_TOOLS") == "1"
DEBIAN_PYTHON = "/usr/bin/python3"
TMP = None  # created by main()
PROCS = []
STATS_DIRS = []  # outside TMP (the workers' user must reach them): removed at exit
passed = failed = 0


def find_tool(name, *dirs):
    """Path of an executable: PATH, then the given directories (nginx lives in
    /usr/sbin, which is not on a normal user's PATH)."""
    found = shutil.which(name)
    if found:
        return found
    for d in dirs:
        cand = os.path.join(d, name)
        if os.access(cand, os.X_OK):
            return cand
    return None


def missing_tools():
    """{tool: what to do} for every tool this test needs that is absent."""
    miss = {}
    if find_tool(OPENSSL) is None:
        miss["openssl"] = "apt-get install openssl"
    if find_tool("curl") is None:
        miss["curl"] = "apt-get install curl"
    if find_tool("nginx", "/usr/sbin") is None:
        miss["nginx"] = "apt-get install nginx"
    if not os.access(DEBIAN_PYTHON, os.X_OK):
        miss["python3-cryptography"] = "apt-get install python3 python3-cryptography"
    else:
        r = subprocess.run([DEBIAN_PYTHON, "-c", "import cryptography; print(cryptography.__file__)"],
                           capture_output=True, text=True, timeout=60,
                           env=dict(os.environ, OPENSSL_CONF="/dev/null"))
        where = r.stdout.strip()
        if r.returncode != 0:
            miss["python3-cryptography"] = "apt-get install python3-cryptography"
        elif not where.startswith("/usr/lib/python3/dist-packages/"):
            # e.g. a pip wheel in /usr/local: its bundled OpenSSL bypasses providers
            miss["python3-cryptography"] = (f"{DEBIAN_PYTHON} imports cryptography from {where}, "
                                            "not Debian's python3-cryptography; a pip wheel "
                                            "carries its own OpenSSL and bypasses providers")
    return miss


MISSING = {}


def check(ok, what):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print("FAIL:", what, flush=True)
    return ok


def cleanup():
    for p in PROCS:
        if p.poll() is None:
            p.kill()
            p.wait()
    if TMP and not os.environ.get("CHAPOLY_KEEP"):
        shutil.rmtree(TMP, ignore_errors=True)
        for d in STATS_DIRS:
            shutil.rmtree(d, ignore_errors=True)


def write_cnf(name="openssl.cnf", extra=""):
    kernel_line = f"kernel = {KERNEL}\n" if KERNEL and KERNEL != "best" else ""
    path = os.path.join(TMP, name)
    with open(path, "w") as f:
        f.write(f"""openssl_conf = openssl_init
config_diagnostics = 1
[openssl_init]
providers = provider_sect
alg_section = algorithm_sect
[provider_sect]
default = default_sect
chapoly = chapoly_sect
[default_sect]
activate = 1
[chapoly_sect]
module = {MODULE}
stats = 1
{extra}{kernel_line}activate = 1
[algorithm_sect]
default_properties = ?provider=chapoly
""")
    return path


CNF = None


def env_for(stats_name):
    e = dict(os.environ)
    e["OPENSSL_CONF"] = CNF
    e["CHAPOLY_STATS_FILE"] = os.path.join(TMP, stats_name)
    e.pop("CHAPOLY_KERNEL", None)  # the config file chooses the level
    e.pop("OPENSSL_MODULES", None)  # the config names the module; others (legacy) stay findable
    return e


def read_stats(name):
    """Sum of the lines the provider appended (one per provider instance)."""
    aead = tls = 0
    try:
        with open(os.path.join(TMP, name)) as f:
            for line in f:
                for field in line.split():
                    k, _, v = field.partition("=")
                    if k == "chapoly-aead-messages":
                        aead += int(v)
                    elif k == "chapoly-tls-records":
                        tls += int(v)
    except FileNotFoundError:
        return None
    return aead, tls


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def wait_port(port, proc, timeout=10.0):
    end = time.time() + timeout
    while time.time() < end:
        if proc is not None and proc.poll() is not None:
            return False
        try:
            out = subprocess.run(["ss", "-ltnH", f"sport = :{port}"], capture_output=True,
                                 text=True, timeout=5).stdout
            if out.strip():
                return True
        except (FileNotFoundError, subprocess.TimeoutExpired):
            time.sleep(0.5)
            return True
        time.sleep(0.05)
    return False


def s_server(port, proto, stats, naccept=None):
    args = [OPENSSL, "s_server", "-accept", f"127.0.0.1:{port}", "-cert", "cert.pem",
            "-key", "key.pem", "-WWW", "-quiet"]
    if proto == "1.3":
        args += ["-tls1_3", "-ciphersuites", "TLS_CHACHA20_POLY1305_SHA256"]
    else:
        args += ["-tls1_2", "-cipher", "ECDHE-RSA-CHACHA20-POLY1305"]
    if naccept:
        args += ["-naccept", str(naccept)]
    p = subprocess.Popen(args, cwd=TMP, env=env_for(stats), stdin=subprocess.DEVNULL,
                         stdout=open(os.path.join(TMP, stats + ".out"), "w"),
                         stderr=subprocess.STDOUT)
    PROCS.append(p)
    return p


def curl(port, proto, stats, out_name, path="payload.bin", timeout=20):
    args = ["curl", "-sS", "-k", "-v", "--max-time", str(timeout), "-o",
            os.path.join(TMP, out_name)]
    if proto == "1.3":
        args += ["--tlsv1.3", "--tls13-ciphers", "TLS_CHACHA20_POLY1305_SHA256"]
    else:
        args += ["--tlsv1.2", "--tls-max", "1.2", "--ciphers", "ECDHE-RSA-CHACHA20-POLY1305"]
    args.append(f"https://127.0.0.1:{port}/{path}")
    r = subprocess.run(args, env=env_for(stats), capture_output=True, text=True,
                       timeout=timeout + 10)
    return r


def same_file(name):
    try:
        with open(os.path.join(TMP, name), "rb") as a, open(PAYLOAD, "rb") as b:
            return a.read() == b.read()
    except FileNotFoundError:
        return False


SUITE = {"1.3": "TLS_CHACHA20_POLY1305_SHA256", "1.2": "ECDHE-RSA-CHACHA20-POLY1305"}


def stats_ok(name, proto, who):
    st = read_stats(name)
    check(st is not None, f"{who}: no statistics file {name}")
    if st is None:
        return
    aead, tls = st
    if proto == "1.3":
        check(aead > 0, f"{who} TLS 1.3: chapoly sealed/opened no message ({st})")
    else:
        check(tls > 0, f"{who} TLS 1.2: chapoly handled no TLS record ({st})")


def test_curl_s_server(proto):
    port = free_port()
    tag = f"sserver{proto}"
    srv = s_server(port, proto, tag + ".srv", naccept=1)
    check(wait_port(port, srv), f"s_server TLS {proto} did not start")
    r = curl(port, proto, tag + ".curl", tag + ".got")
    check(r.returncode == 0, f"curl <- s_server TLS {proto}: exit {r.returncode}: {r.stderr[-300:]}")
    check(same_file(tag + ".got"), f"curl <- s_server TLS {proto}: bytes differ")
    check(SUITE[proto] in r.stderr or SUITE[proto].replace("-", "_") in r.stderr
          or "CHACHA20" in r.stderr, f"curl TLS {proto}: ChaCha suite not negotiated")
    try:
        srv.wait(timeout=15)
    except subprocess.TimeoutExpired:
        srv.kill()
    stats_ok(tag + ".srv", proto, f"s_server {proto}")
    stats_ok(tag + ".curl", proto, f"curl (s_server) {proto}")


def test_nginx():
    nginx = find_tool("nginx", "/usr/sbin")
    port = free_port()
    for d in ("logs", "tmp"):
        os.makedirs(os.path.join(TMP, "nginx", d), exist_ok=True)
    conf = os.path.join(TMP, "nginx", "nginx.conf")
    with open(conf, "w") as f:
        f.write(f"""
daemon off;
master_process off;
worker_processes 1;
error_log {TMP}/nginx/logs/error.log warn;
pid {TMP}/nginx/nginx.pid;
env OPENSSL_CONF;
env CHAPOLY_STATS_FILE;
events {{ worker_connections 64; }}
http {{
    access_log off;
    client_body_temp_path {TMP}/nginx/tmp;
    proxy_temp_path {TMP}/nginx/tmp;
    fastcgi_temp_path {TMP}/nginx/tmp;
    uwsgi_temp_path {TMP}/nginx/tmp;
    scgi_temp_path {TMP}/nginx/tmp;
    server {{
        listen 127.0.0.1:{port} ssl;
        ssl_certificate {TMP}/cert.pem;
        ssl_certificate_key {TMP}/key.pem;
        ssl_protocols TLSv1.2 TLSv1.3;
        ssl_ciphers ECDHE-RSA-CHACHA20-POLY1305;
        ssl_conf_command Ciphersuites TLS_CHACHA20_POLY1305_SHA256;
        root {TMP};
    }}
}}
""")
    p = subprocess.Popen([nginx, "-p", os.path.join(TMP, "nginx"), "-c", conf],
                         env=env_for("nginx.srv"), stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    PROCS.append(p)
    if not check(wait_port(port, p), "nginx did not start"):
        return
    for proto in ("1.3", "1.2"):
        r = curl(port, proto, f"nginx{proto}.curl", f"nginx{proto}.got")
        check(r.returncode == 0, f"curl <- nginx TLS {proto}: exit {r.returncode}: {r.stderr[-300:]}")
        check(same_file(f"nginx{proto}.got"), f"curl <- nginx TLS {proto}: bytes differ")
        stats_ok(f"nginx{proto}.curl", proto, f"curl (nginx) {proto}")
    p.send_signal(signal.SIGQUIT)  # graceful: exit() runs, so the provider tears down
    try:
        p.wait(timeout=15)
    except subprocess.TimeoutExpired:
        p.kill()
    st = read_stats("nginx.srv")
    check(st is not None and st[0] > 0 and st[1] > 0,
          f"nginx: chapoly did not serve both TLS 1.3 messages and TLS 1.2 records ({st})")


COUNTER_NAMES = ("chapoly-aead-messages", "chapoly-aead-seals", "chapoly-aead-opens",
                 "chapoly-tls-records", "chapoly-chacha20-calls", "chapoly-chacha20-bytes",
                 "chapoly-poly1305-macs", "chapoly-pipeline-batches")


def parse_stats_line(line):
    """{field: int} of one statistics line, or None unless it is exactly
    pid=N followed by every counter in order."""
    fields = line.split()
    names = [f.partition("=")[0] for f in fields]
    if names != ["pid", *COUNTER_NAMES]:
        return None
    try:
        return {f.partition("=")[0]: int(f.partition("=")[2]) for f in fields}
    except ValueError:
        return None


def children_of(ppid):
    """Process ids whose parent is ppid (from /proc)."""
    kids = set()
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                # the field after the parenthesised command name: state, then ppid
                rest = f.read().rsplit(")", 1)[1].split()
            if int(rest[1]) == ppid:
                kids.add(int(d))
        except (OSError, IndexError, ValueError):
            pass
    return kids


def test_nginx_workers():
    """nginx as deployed: a master (root when the test runs as root) and two
    workers (then nobody), chapoly with stats = 1 and stats_file = DIR/nginx-%p.stats
    in the openssl.cnf; no env directive, so the workers have no environment.
    The master's environment names CHAPOLY_STATS_FILE (the issue's setup):
    the master encrypts nothing, so neither that file nor a master line may
    appear. After `nginx -s quit` every file is a worker's, named by its pid,
    with one line carrying that pid and every counter, together > 0."""
    nginx = find_tool("nginx", "/usr/sbin")
    port = free_port()
    prefix = os.path.join(TMP, "nginxw")
    os.makedirs(os.path.join(prefix, "logs"), exist_ok=True)
    # the workers' directory: their own, as an admin would make /var/log/chapoly
    sdir = tempfile.mkdtemp(prefix="chapoly-nginx-stats-")
    STATS_DIRS.append(sdir)
    user_line = ""
    if os.geteuid() == 0:
        try:
            pw = pwd.getpwnam("nobody")
        except KeyError:
            pw = None
        if pw is not None:
            os.chown(sdir, pw.pw_uid, pw.pw_gid)
            user_line = f"user nobody {grp.getgrgid(pw.pw_gid).gr_name};"
    cnf = write_cnf("openssl-nginxw.cnf",
                    f"stats_file = {sdir}/nginx-%p.stats\n")
    conf = os.path.join(prefix, "nginx.conf")
    with open(conf, "w") as f:
        f.write(f"""
{user_line}
daemon off;
worker_processes 2;
error_log {prefix}/logs/error.log warn;
pid {prefix}/nginx.pid;
events {{ worker_connections 64; }}
http {{
    access_log off;
    server {{
        listen 127.0.0.1:{port} ssl;
        ssl_certificate {TMP}/cert.pem;
        ssl_certificate_key {TMP}/key.pem;
        ssl_protocols TLSv1.2 TLSv1.3;
        ssl_ciphers ECDHE-RSA-CHACHA20-POLY1305;
        ssl_conf_command Ciphersuites TLS_CHACHA20_POLY1305_SHA256;
        location / {{ return 200 "served\\n"; }}
    }}
}}
""")
    env = env_for("nginxw-master.stats")  # CHAPOLY_STATS_FILE: the master's only
    env["OPENSSL_CONF"] = cnf
    master_file = os.path.join(TMP, "nginxw-master.stats")
    args = [nginx, "-p", prefix, "-c", conf]
    p = subprocess.Popen(args, env=env, stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    PROCS.append(p)
    if not check(wait_port(port, p), "nginx (master + workers) did not start"):
        return
    end = time.time() + 10
    workers = children_of(p.pid)
    while len(workers) < 2 and time.time() < end:  # the master forks them after listening
        time.sleep(0.05)
        workers = children_of(p.pid)
    check(len(workers) == 2, f"nginx: {len(workers)} worker processes, want 2")
    for i in range(6):
        proto = ("1.3", "1.2")[i % 2]
        r = curl(port, proto, "nginxw.curl", "nginxw.got", path="x")
        got = open(os.path.join(TMP, "nginxw.got"), "rb").read() if r.returncode == 0 else b""
        check(r.returncode == 0 and got == b"served\n",
              f"curl <- nginx workers TLS {proto}: exit {r.returncode}: {r.stderr[-300:]}")
    q = subprocess.run(args + ["-s", "quit"], env=env, capture_output=True, text=True,
                       timeout=30)
    check(q.returncode == 0, f"nginx -s quit: exit {q.returncode}: {q.stderr[-300:]}")
    try:
        p.wait(timeout=20)
    except subprocess.TimeoutExpired:
        p.kill()
        check(False, "nginx did not quit")
        return
    check(not os.path.exists(master_file),
          "nginx: the master (or nginx -s quit), which encrypted nothing, wrote "
          "CHAPOLY_STATS_FILE")
    files = sorted(os.listdir(sdir))
    total = {}
    for name in files:
        pid = name[len("nginx-"):-len(".stats")] if name.startswith("nginx-") and \
            name.endswith(".stats") else ""
        check(pid.isdigit() and int(pid) in workers,
              f"nginx: {name} is not named after a worker (workers {sorted(workers)}, "
              f"master {p.pid})")
        path = os.path.join(sdir, name)
        st = os.stat(path)
        check(st.st_mode & 0o777 == 0o600, f"nginx: {name} has mode {st.st_mode & 0o777:o}")
        with open(path) as f:
            lines = f.read().splitlines()
        check(len(lines) == 1, f"nginx: {name} has {len(lines)} lines, want 1")
        for line in lines:
            v = parse_stats_line(line)
            if not check(v is not None, f"nginx: {name}: malformed line {line!r}"):
                continue
            check(str(v["pid"]) == pid, f"nginx: {name} holds the line of pid {v['pid']}")
            check(any(v[k] for k in COUNTER_NAMES), f"nginx: {name}: an all-zero line")
            for k in COUNTER_NAMES:
                total[k] = total.get(k, 0) + v[k]
    check(len(files) >= 1, f"nginx: no worker wrote a statistics line (error log: "
          f"{open(os.path.join(prefix, 'logs', 'error.log')).read()[-300:]})")
    check(total.get("chapoly-aead-messages", 0) > 0 and total.get("chapoly-tls-records", 0) > 0
          and total.get("chapoly-aead-seals", 0) > 0 and total.get("chapoly-aead-opens", 0) > 0,
          f"nginx workers: chapoly served no TLS 1.3 messages or TLS 1.2 records ({total})")
    check(total.get("chapoly-aead-messages", 0) ==
          total.get("chapoly-aead-seals", 0) + total.get("chapoly-aead-opens", 0),
          f"nginx workers: messages != seals + opens ({total})")


PY_CRYPTO = r"""
import sys
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
out = []
for n in (0, 1, 15, 16, 17, 64, 100, 1350, 5000):
    key = bytes((i * 7 + n) & 255 for i in range(32))
    nonce = bytes((i * 3 + n) & 255 for i in range(12))
    aad = bytes(range(n % 20))
    pt = bytes((i * 11 + 5) & 255 for i in range(n))
    c = ChaCha20Poly1305(key)
    ct = c.encrypt(nonce, pt, aad)
    assert c.decrypt(nonce, ct, aad) == pt
    bad = bytearray(ct); bad[-1] ^= 1
    try:
        c.decrypt(nonce, bytes(bad), aad)
        print("FORGERY ACCEPTED"); sys.exit(1)
    except Exception:
        pass
    out.append(ct.hex())
print("\n".join(out))
"""


def test_python_cryptography():
    py = DEBIAN_PYTHON
    base = dict(os.environ, OPENSSL_CONF="/dev/null")
    base.pop("CHAPOLY_STATS_FILE", None)
    base.pop("OPENSSL_MODULES", None)
    ref = subprocess.run([py, "-c", PY_CRYPTO], env=base, capture_output=True, text=True,
                         timeout=60)
    ours = subprocess.run([py, "-c", PY_CRYPTO], env=env_for("python.stats"),
                          capture_output=True, text=True, timeout=60)
    check(ref.returncode == 0, f"python cryptography without chapoly failed: {ref.stderr[-300:]}")
    check(ours.returncode == 0, f"python cryptography with chapoly failed: {ours.stderr[-300:]}")
    check(ref.stdout and ref.stdout == ours.stdout,
          "python cryptography: ciphertexts differ with and without chapoly")
    st = read_stats("python.stats")
    # 9 sizes x (seal + open + rejected forgery)
    check(st is not None and st[0] >= 27,
          f"python cryptography did not go through chapoly (stats {st})")


def test_speed():
    # No config file here: the level under test comes from CHAPOLY_KERNEL (by
    # name, so chapoly serves ChaCha20-Poly1305 at the portable level too).
    level = {"CHAPOLY_KERNEL": KERNEL} if KERNEL else {}
    r = subprocess.run([OPENSSL, "speed", "-provider-path", os.path.dirname(MODULE),
                        "-provider", "default", "-provider", "chapoly", "-propquery",
                        "?provider=chapoly", "-evp", "chacha20-poly1305", "-seconds", "1",
                        "-bytes", "1024"],
                       env=dict(env_for("speed.stats"), OPENSSL_CONF="/dev/null",
                                CHAPOLY_STATS="1", **level),
                       capture_output=True, text=True, timeout=120)
    check(r.returncode == 0 and "chacha20-poly1305" in r.stdout.lower(),
          f"openssl speed failed: {r.returncode} {r.stderr[-300:]}")
    st = read_stats("speed.stats")
    check(st is not None and st[0] >= 1, f"openssl speed did not run through chapoly ({st})")


# ---- faults: a man in the middle on loopback ----

def relay(src, dst, mode, state):
    """Copy src -> dst. In client->server direction, 'flip' flips a bit in the
    first TLS record of type 23 (application data / TLS 1.3 encrypted) and
    'truncate' sends half of that record then closes; in the server->client
    direction 'drop' closes after ~20 KB of data."""
    buf = b""
    seen = 0
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            if mode in ("flip", "truncate") and not state.get("done"):
                buf += data
                out = b""
                while len(buf) >= 5:
                    rtype, rlen = buf[0], int.from_bytes(buf[3:5], "big")
                    if len(buf) < 5 + rlen:
                        break
                    rec, buf = buf[:5 + rlen], buf[5 + rlen:]
                    if rtype == 23 and not state.get("done"):
                        state["done"] = True
                        if mode == "flip":
                            rec = rec[:5 + rlen // 2] + bytes([rec[5 + rlen // 2] ^ 0x10]) + \
                                rec[5 + rlen // 2 + 1:]
                        else:
                            dst.sendall(out + rec[:5 + rlen // 2])
                            raise ConnectionAbortedError
                    out += rec
                if state.get("done"):
                    out += buf
                    buf = b""
                dst.sendall(out)
                continue
            if mode == "drop":
                seen += len(data)
                if seen > 20000:
                    dst.sendall(data[:len(data) // 2])
                    raise ConnectionAbortedError
            dst.sendall(data)
    except (OSError, ConnectionAbortedError):
        pass
    for s in (src, dst):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def mitm(listen_port, server_port, mode):
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", listen_port))
    ls.listen(1)
    ls.settimeout(20)

    def run():
        try:
            c, _ = ls.accept()
        except OSError:
            return
        s = socket.create_connection(("127.0.0.1", server_port), timeout=20)
        state = {}
        up = threading.Thread(target=relay, args=(c, s, mode if mode != "drop" else "", state))
        down = threading.Thread(target=relay, args=(s, c, "drop" if mode == "drop" else "", state))
        up.start()
        down.start()
        up.join(30)
        down.join(30)
        c.close()
        s.close()
        ls.close()

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t


def test_faults(proto):
    port = free_port()
    srv = s_server(port, proto, f"faults{proto}.srv")
    if not check(wait_port(port, srv), f"s_server for faults TLS {proto} did not start"):
        return
    for mode in ("flip", "truncate", "drop"):
        mport = free_port()
        t = mitm(mport, port, mode)
        r = curl(mport, proto, f"faults{proto}{mode}.curl", f"faults{proto}{mode}.got", timeout=10)
        t.join(30)
        # flip/truncate must fail the connection; a drop mid-record may look
        # like EOF to curl, but it must never deliver the whole file
        check((r.returncode != 0 or mode == "drop") and not same_file(f"faults{proto}{mode}.got"),
              f"TLS {proto} {mode}: the client did not fail (exit {r.returncode})")
        if mode == "flip":
            # the server could not authenticate the record and said so
            check("bad record mac" in r.stderr.lower(),
                  f"TLS {proto} flip: no bad_record_mac alert: {r.stderr[-300:]}")
        check(srv.poll() is None, f"TLS {proto} {mode}: s_server died")
        # the server keeps serving the next client
        r2 = curl(port, proto, f"faults{proto}{mode}.ok.curl", f"faults{proto}{mode}.ok.got")
        check(r2.returncode == 0 and same_file(f"faults{proto}{mode}.ok.got"),
              f"TLS {proto} after {mode}: next client not served ({r2.returncode})")
    srv.kill()
    srv.wait()


def main():
    global CNF, PAYLOAD, TMP, MISSING
    probe = os.environ.get("CHAPOLY_LEVEL_PROBE")
    if probe and KERNEL and subprocess.run([probe, KERNEL]).returncode == 77:
        sys.exit(77)
    MISSING = missing_tools()
    if "openssl" in MISSING:
        return  # nothing here runs without it
    TMP = tempfile.mkdtemp(prefix="chapoly-clients-")
    CNF = write_cnf()
    subprocess.run([OPENSSL, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout",
                    os.path.join(TMP, "key.pem"), "-out", os.path.join(TMP, "cert.pem"),
                    "-subj", "/CN=localhost", "-days", "1"],
                   env=dict(os.environ, OPENSSL_CONF="/dev/null"), check=True,
                   capture_output=True, timeout=60)
    PAYLOAD = os.path.join(TMP, "payload.bin")
    with open(PAYLOAD, "wb") as f:
        f.write(os.urandom(300000))
    if "curl" not in MISSING:
        for proto in ("1.3", "1.2"):
            test_curl_s_server(proto)
        if "nginx" not in MISSING:
            test_nginx()
            test_nginx_workers()
    if "python3-cryptography" not in MISSING:
        test_python_cryptography()
    test_speed()
    if "curl" not in MISSING:
        for proto in ("1.3", "1.2"):
            test_faults(proto)


if __name__ == "__main__":
    if sys.argv[1:] == ["--check-tools"]:
        miss = missing_tools()
        for tool, hint in miss.items():
            print(f"missing {tool}: {hint}")
        sys.exit(1 if miss else 0)
    try:
        main()
    except SystemExit as e:
        if e.code == 77:
            cleanup()
            raise
    finally:
        cleanup()
    if os.environ.get("CHAPOLY_KEEP"):
        print("kept", TMP, *STATS_DIRS)
    for tool, hint in MISSING.items():
        print(f"missing {tool} ({hint}): the checks that need it did not run")
    if MISSING and REQUIRE_TOOLS:
        print("FAIL: CHAPOLY_REQUIRE_TOOLS=1: a missing test tool is a failure")
        failed += len(MISSING)
    print(f"test_clients [kernel {KERNEL or '-'}]")
    print(f"{passed} passed, {failed} failed")
    if MISSING and failed == 0:
        print("skipped: test tools missing")
        sys.exit(77)
    sys.exit(0 if failed == 0 and passed > 0 else 1)

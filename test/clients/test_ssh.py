#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""OpenSSH through chapoly: Debian's sshd on a loopback port and Debian's ssh,
both linked to the system libcrypto and configured only through OPENSSL_CONF,
with Ciphers chacha20-poly1305@openssh.com on both ends. OpenSSH takes ChaCha20
from libcrypto (EVP_chacha20, an implicit fetch that honours
default_properties) and computes Poly1305 itself, so chapoly's ChaCha20
counters are the proof that it served the cipher.

Each process writes its own statistics line at exit (config key
stats_file = DIR/ssh-%p.stats or DIR/sshd-%p.stats). The provider writes it
when libcrypto tears down, i.e. from exit(); OpenSSH ends some processes with
_exit() instead, which decides how each side is proven:

  A. client side: `ssh ... 'head -c N > up && cat down'`, 10 MiB up from
     ssh's stdin, 10 MiB down to its stdout; ssh exits normally and writes
     its line: ChaCha20 over at least 2 x 10 MiB. (sshd's session process
     ends with _exit() when it receives the client's SSH_MSG_DISCONNECT, so
     it writes nothing here.)
  B. server side: the same transfer, but the remote command then waits for
     stdin and the client is killed once everything arrived, so the
     connection ends without a DISCONNECT; sshd's session process (the
     listener's child serving this connection) then leaves its loop and
     exit()s: its line shows ChaCha20 over at least 2 x 10 MiB.
  mixed: chapoly at one end, OpenSSL's own ChaCha20 at the other (a second
     sshd whose config prefers the default provider), each way round, 2 MiB:
     what chapoly puts on the wire is what the other implementation expects;
     the chapoly end counts as in A (client) or B (server).
  control: both ends with chapoly loaded and counting but the default
     provider preferred (default_properties = ?provider=default): the same
     transfers (1 MiB) intact and not one statistics line from any process
     preferring the default provider, in any run.

The bytes are compared both ways in every run. Root is needed (sshd's
privilege separation: the sshd user, /run/sshd, created here if missing, as
the service would). Environment (from CTest): CHAPOLY_MODULE, CHAPOLY_KERNEL,
CHAPOLY_LEVEL_PROBE. A missing tool or no root: skipped (exit 77), or a
failure under CHAPOLY_REQUIRE_TOOLS=1 (scripts/test-all.sh).
`test_ssh.py --check-tools` only reports what is missing (exit 1 if any).
Prints "N passed, N failed" last; exit 0 only if all passed.
"""
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

MODULE = os.environ.get("CHAPOLY_MODULE", "")
KERNEL = os.environ.get("CHAPOLY_KERNEL", "")
REQUIRE_TOOLS = os.environ.get("CHAPOLY_REQUIRE_TOOLS") == "1"
SSHD = "/usr/sbin/sshd"  # sshd re-executes itself: it needs its absolute path
CIPHER = "chacha20-poly1305@openssh.com"
MIB = 1024 * 1024
SIZE = 10 * MIB          # each way, runs A and B
MIXED_SIZE = 2 * MIB     # each way, one end chapoly and the other not
CONTROL_SIZE = 1 * MIB   # each way, the control
# An SSH packet carries at most 35000 bytes (RFC 4253 6.1; OpenSSH's channels
# use 32 KiB), and chacha20-poly1305@openssh.com makes three ChaCha20 calls
# per packet (Poly1305 key, length, payload).
MAX_PACKET = 35000
COUNTERS = ("chapoly-aead-messages", "chapoly-aead-seals", "chapoly-aead-opens",
            "chapoly-tls-records", "chapoly-chacha20-calls", "chapoly-chacha20-bytes",
            "chapoly-poly1305-macs", "chapoly-pipeline-batches")
TMP = None
PROCS = []
passed = failed = 0


def check(ok, what):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print("FAIL:", what, flush=True)
    return ok


def missing_tools():
    """{tool: what to do} for everything this test needs that is absent."""
    miss = {}
    for tool in ("ssh", "ssh-keygen"):
        if shutil.which(tool) is None:
            miss[tool] = "apt-get install openssh-client"
    if not os.access(SSHD, os.X_OK):
        miss["sshd"] = "apt-get install openssh-server"
    else:
        try:
            pwd.getpwnam("sshd")
        except KeyError:
            miss["sshd user"] = ("sshd's privilege separation user is missing "
                                 "(apt-get install --reinstall openssh-server creates it)")
    if shutil.which("ss") is None:
        miss["ss"] = "apt-get install iproute2"
    return miss


def cleanup():
    for p in PROCS:
        if p.poll() is None:
            p.kill()
            p.wait()
    if TMP and not os.environ.get("CHAPOLY_KEEP"):
        shutil.rmtree(TMP, ignore_errors=True)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def wait_port(port, proc, timeout=10.0):
    end = time.time() + timeout
    while time.time() < end:
        if proc.poll() is not None:
            return False
        out = subprocess.run(["ss", "-ltnH", f"sport = :{port}"], capture_output=True,
                             text=True, timeout=5).stdout
        if out.strip():
            return True
        time.sleep(0.05)
    return False


def children_of(ppid):
    kids = set()
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                rest = f.read().rsplit(")", 1)[1].split()
            if int(rest[1]) == ppid:
                kids.add(int(d))
        except (OSError, IndexError, ValueError):
            pass
    return kids


def write_cnf(name, stats_dir, prefix, prefer):
    """A config loading default and chapoly (stats on, one file per process)
    with default_properties = ?provider=PREFER."""
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
stats_file = {stats_dir}/{prefix}-%p.stats
{kernel_line}activate = 1
[algorithm_sect]
default_properties = ?provider={prefer}
""")
    return path


def clean_env(cnf):
    e = dict(os.environ)
    e["OPENSSL_CONF"] = cnf
    for k in ("CHAPOLY_STATS", "CHAPOLY_STATS_FILE", "CHAPOLY_KERNEL", "OPENSSL_MODULES"):
        e.pop(k, None)  # the config file decides
    return e


def parse_line(line):
    fields = line.split()
    if [f.partition("=")[0] for f in fields] != ["pid", *COUNTERS]:
        return None
    try:
        return {f.partition("=")[0]: int(f.partition("=")[2]) for f in fields}
    except ValueError:
        return None


def stats_files(stats_dir):
    return sorted(os.listdir(stats_dir))


def read_line(stats_dir, name, who):
    """The single well-formed line of one process's file, or None."""
    path = os.path.join(stats_dir, name)
    try:
        with open(path) as f:
            lines = f.read().splitlines()
    except FileNotFoundError:
        check(False, f"{who}: no statistics file {name} (files: {stats_files(stats_dir)})")
        return None
    if not check(len(lines) == 1, f"{who}: {name} has {len(lines)} lines, want 1"):
        return None
    v = parse_line(lines[0])
    check(v is not None, f"{who}: malformed statistics line {lines[0]!r}")
    return v


def check_chacha(v, who, nbytes):
    """ChaCha20 over at least the bytes moved both ways (each side encrypts
    what it sends and decrypts what it receives), in at least three calls per
    packet those bytes need."""
    if v is None:
        return
    min_calls = 3 * 2 * -(-nbytes // MAX_PACKET)
    check(v["chapoly-chacha20-bytes"] >= 2 * nbytes,
          f"{who}: chapoly-chacha20-bytes {v['chapoly-chacha20-bytes']} < {2 * nbytes} "
          f"(2 x {nbytes} moved): chapoly did not serve OpenSSH's ChaCha20 ({v})")
    check(v["chapoly-chacha20-calls"] >= min_calls,
          f"{who}: chapoly-chacha20-calls {v['chapoly-chacha20-calls']} < {min_calls} ({v})")


def start_sshd(tag, cnf):
    port = free_port()
    cfg = os.path.join(TMP, f"sshd_config.{tag}")
    with open(cfg, "w") as f:
        f.write(f"""Port {port}
ListenAddress 127.0.0.1
HostKey {TMP}/host_key
AuthorizedKeysFile {TMP}/authorized_keys
PidFile {TMP}/sshd.{tag}.pid
Ciphers {CIPHER}
UsePAM no
StrictModes no
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
X11Forwarding no
PrintMotd no
PrintLastLog no
LogLevel VERBOSE
""")
    log = open(os.path.join(TMP, f"sshd.{tag}.log"), "w")
    p = subprocess.Popen([SSHD, "-D", "-e", "-f", cfg], env=clean_env(cnf),
                         stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
    PROCS.append(p)
    if not check(wait_port(port, p), f"sshd ({tag}) did not start: {sshd_log(tag)}"):
        return None, None
    return p, port


def sshd_log(tag):
    try:
        with open(os.path.join(TMP, f"sshd.{tag}.log")) as f:
            text = f.read()
    except OSError:
        return ""
    hint = ""
    if "account is locked" in text:
        hint = (" (the login user's account is locked in /etc/shadow: with UsePAM no, sshd "
                "refuses even a public key; unlock it with usermod -p '*' USER)")
    return text[-600:] + hint


def ssh_args(port, verbose=False):
    user = pwd.getpwuid(os.getuid()).pw_name
    args = ["ssh", "-F", "/dev/null", "-o", "BatchMode=yes", "-o", "IdentitiesOnly=yes",
            "-i", os.path.join(TMP, "client_key"),
            "-o", f"UserKnownHostsFile={TMP}/known_hosts", "-o", "HostKeyAlias=chapoly-test",
            "-o", "StrictHostKeyChecking=yes",
            "-o", "Compression=no", "-o", "ConnectTimeout=10", "-c", CIPHER, "-p", str(port)]
    if verbose:
        args.append("-v")
    return args + [f"{user}@127.0.0.1"]


def transfer(tag, srv, port, cnf, size, cut):
    """size bytes up (ssh's stdin -> a file) and size bytes down (a file ->
    ssh's stdout) on one connection. cut: once all has arrived, kill ssh
    (the remote command waits on stdin, so the connection is still open) and
    return the pid of the sshd process that served it; else ssh exits by
    itself. Returns (ssh pid, sshd session pid or None, ssh's stderr)."""
    up = os.urandom(size)
    down = os.urandom(size)
    up_got = os.path.join(TMP, f"{tag}.up.got")
    down_src = os.path.join(TMP, f"{tag}.down")
    with open(down_src, "wb") as f:
        f.write(down)
    # the listener's children now (a session process of an earlier connection
    # may still be on its way out): not this connection's
    before = children_of(srv.pid)
    remote = f"head -c {size} > {up_got} && cat {down_src}"
    if cut:
        remote += " && exec cat > /dev/null"
    p = subprocess.Popen(ssh_args(port, verbose=True) + [remote], env=clean_env(cnf),
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    PROCS.append(p)
    err = []
    reader = threading.Thread(target=lambda: err.append(p.stderr.read()), daemon=True)
    reader.start()

    def feed():
        try:
            p.stdin.write(up)
            p.stdin.flush()
            if not cut:
                p.stdin.close()
        except OSError:
            pass
    threading.Thread(target=feed, daemon=True).start()
    got = bytearray()
    deadline = time.time() + 60
    while len(got) < size and time.time() < deadline:
        d = p.stdout.read1(1 << 20)
        if not d:
            break
        got += d
    session = None
    if cut:
        # the connection is open: the listener's child serving it
        session = children_of(srv.pid) - before
        p.kill()
    try:
        p.wait(timeout=30)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
    if not cut:
        rest = p.stdout.read()
        got += rest
    reader.join(10)
    stderr = err[0].decode(errors="replace") if err else ""
    if not cut:
        check(p.returncode == 0, f"{tag}: ssh exit {p.returncode}: {stderr[-400:]}")
    check(len(got) == size and bytes(got) == down,
          f"{tag}: {len(got)} bytes came down, want {size} identical bytes")
    try:
        with open(up_got, "rb") as f:
            up_ok = f.read() == up
    except FileNotFoundError:
        up_ok = False
    check(up_ok, f"{tag}: the {size} bytes sent up arrived changed or incomplete")
    for direction in ("client->server", "server->client"):
        check(f"kex: {direction} cipher: {CIPHER}" in stderr,
              f"{tag}: ssh -v does not show {CIPHER} for {direction}: {stderr[-400:]}")
    if cut:
        check(session is not None and len(session) == 1,
              f"{tag}: {0 if not session else len(session)} sshd processes serve the connection,"
              " want 1")
        session = next(iter(session)) if session else None
    return p.pid, session, stderr


def wait_gone(pid, timeout=15.0):
    end = time.time() + timeout
    while os.path.exists(f"/proc/{pid}") and time.time() < end:
        time.sleep(0.05)
    return not os.path.exists(f"/proc/{pid}")


def wait_file(stats_dir, name, timeout=15.0):
    end = time.time() + timeout
    while time.time() < end:
        if os.path.exists(os.path.join(stats_dir, name)):
            time.sleep(0.1)  # the line is written with one write(); let it land
            return True
        time.sleep(0.05)
    return False


def stop_sshd(srv):
    srv.send_signal(signal.SIGTERM)
    try:
        srv.wait(timeout=10)
    except subprocess.TimeoutExpired:
        srv.kill()
        srv.wait()


def client_counted(tag, pid, sdir, size):
    """Run `tag` ended with ssh's own exit: its line, ChaCha20 over 2 x size."""
    wait_file(sdir, f"ssh-{pid}.stats")
    who = f"ssh (run {tag})"
    check_chacha(read_line(sdir, f"ssh-{pid}.stats", who), who, size)


def server_counted(tag, session, sdir, size):
    """Run `tag` ended by cutting the client off: the line of sshd's session
    process, ChaCha20 over 2 x size."""
    if session is None:
        return
    who = f"sshd (run {tag})"
    if check(wait_file(sdir, f"sshd-{session}.stats"),
             f"{who}: the session process {session} wrote no statistics line "
             f"(files: {stats_files(sdir)}; log: {sshd_log('chapoly')})"):
        check_chacha(read_line(sdir, f"sshd-{session}.stats", who), who, size)


def run_all():
    # processes preferring chapoly write into stats/, the others into stats-default/
    sdir = os.path.join(TMP, "stats")
    ddir = os.path.join(TMP, "stats-default")
    os.mkdir(sdir)
    os.mkdir(ddir)
    ssh_cnf = write_cnf("ssh.cnf", sdir, "ssh", "chapoly")
    sshd_cnf = write_cnf("sshd.cnf", sdir, "sshd", "chapoly")
    ssh_dcnf = write_cnf("ssh-default.cnf", ddir, "ssh", "default")
    sshd_dcnf = write_cnf("sshd-default.cnf", ddir, "sshd", "default")
    srv, port = start_sshd("chapoly", sshd_cnf)
    dsrv, dport = start_sshd("default", sshd_dcnf)
    if srv is None or dsrv is None:
        return

    # both ends chapoly. A: the client exits by itself and counts; B: the
    # client is cut off, so sshd's session process exits and counts
    pid, _, _ = transfer("A", srv, port, ssh_cnf, SIZE, cut=False)
    client_counted("A", pid, sdir, SIZE)
    _, session, _ = transfer("B", srv, port, ssh_cnf, SIZE, cut=True)
    server_counted("B", session, sdir, SIZE)

    # one end chapoly, the other OpenSSL's own ChaCha20: the bytes chapoly puts
    # on the wire are the ones the default provider's peer expects
    pid, _, _ = transfer("mixed-client", dsrv, dport, ssh_cnf, MIXED_SIZE, cut=False)
    client_counted("mixed-client", pid, sdir, MIXED_SIZE)
    _, session, _ = transfer("mixed-server", srv, port, ssh_dcnf, MIXED_SIZE, cut=True)
    server_counted("mixed-server", session, sdir, MIXED_SIZE)

    # control: chapoly loaded and counting at both ends, the default preferred
    transfer("control-A", dsrv, dport, ssh_dcnf, CONTROL_SIZE, cut=False)
    _, session, _ = transfer("control-B", dsrv, dport, ssh_dcnf, CONTROL_SIZE, cut=True)
    if session is not None:  # its line, if any, is written by the time it is gone
        check(wait_gone(session), f"control: sshd's session process {session} did not exit")

    stop_sshd(srv)
    stop_sshd(dsrv)
    # the listeners encrypted nothing: no line of their own
    check(f"sshd-{srv.pid}.stats" not in stats_files(sdir),
          "sshd's listener, which encrypted nothing, wrote a statistics line")
    for name in stats_files(sdir):
        v = read_line(sdir, name, name)
        check(v is not None and str(v["pid"]) == name.split("-")[-1].split(".")[0],
              f"{name}: not the line of its own process ({v})")
    files = stats_files(ddir)
    check(not files, "processes with chapoly loaded but the default provider preferred: "
          "chapoly counted ChaCha20 anyway: "
          f"{[open(os.path.join(ddir, n)).read() for n in files]}")


def main():
    global TMP
    probe = os.environ.get("CHAPOLY_LEVEL_PROBE")
    if probe and KERNEL and subprocess.run([probe, KERNEL]).returncode == 77:
        sys.exit(77)
    TMP = tempfile.mkdtemp(prefix="chapoly-ssh-")
    os.chmod(TMP, 0o755)
    for name in ("host_key", "client_key"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f",
                        os.path.join(TMP, name)], check=True, timeout=60,
                       env=dict(os.environ, OPENSSL_CONF="/dev/null"))
    shutil.copy(os.path.join(TMP, "client_key.pub"), os.path.join(TMP, "authorized_keys"))
    with open(os.path.join(TMP, "host_key.pub")) as f:
        host_pub = f.read().split()
    with open(os.path.join(TMP, "known_hosts"), "w") as f:  # ssh -o HostKeyAlias=chapoly-test
        f.write(f"chapoly-test {host_pub[0]} {host_pub[1]}\n")
    if not os.path.isdir("/run/sshd"):  # sshd's privilege separation chroot
        os.makedirs("/run/sshd", mode=0o755)
    run_all()


def skip_or_fail(reason):
    print(reason)
    if REQUIRE_TOOLS:
        print("FAIL: CHAPOLY_REQUIRE_TOOLS=1: the test could not run")
        print("0 passed, 1 failed")
        sys.exit(1)
    print("skipped")
    sys.exit(77)


if __name__ == "__main__":
    miss = missing_tools()
    if sys.argv[1:] == ["--check-tools"]:
        for tool, hint in miss.items():
            print(f"missing {tool}: {hint}")
        sys.exit(1 if miss else 0)
    if miss:
        skip_or_fail("; ".join(f"missing {t} ({h})" for t, h in miss.items()))
    if os.geteuid() != 0:
        skip_or_fail("not root: sshd's privilege separation (the sshd user, the /run/sshd "
                     "chroot) needs it")
    try:
        main()
    finally:
        cleanup()
    if os.environ.get("CHAPOLY_KEEP"):
        print("kept", TMP)
    print(f"test_ssh [kernel {KERNEL or '-'}]")
    print(f"{passed} passed, {failed} failed")
    sys.exit(0 if failed == 0 and passed > 0 else 1)

"""Fixtures: the unlearn command (built once per test session from the
repository, or $UNLEARN_BIN) and real services on free loopback ports."""

import os
import random
import select
import shutil
import signal
import subprocess
import time

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(scope="session")
def unlearn_bin(tmp_path_factory):
    """The unlearn command: $UNLEARN_BIN, or built from the repository with
    the Go toolchain (go on PATH or /usr/local/go/bin)."""
    given = os.environ.get("UNLEARN_BIN")
    if given:
        return given
    go = shutil.which("go") or "/usr/local/go/bin/go"
    if not os.path.exists(go) and shutil.which(go) is None:
        pytest.skip("no Go toolchain to build the unlearn command (set UNLEARN_BIN)")
    out = str(tmp_path_factory.mktemp("bin") / "unlearn")
    subprocess.run([go, "build", "-o", out, "./cmd/unlearn"], cwd=REPO, check=True)
    return out


def run(binary, *args, input=None):
    """Runs the command; returns its standard output."""
    p = subprocess.run([binary, *args], capture_output=True, text=True, input=input)
    if p.returncode != 0:
        raise AssertionError("unlearn %s failed (%d): %s" % (" ".join(args), p.returncode, p.stderr))
    return p.stdout


class Service:
    """A running `unlearn serve` over a fresh logistic store of dimension d,
    with the certifier's key, and tokens by scope."""

    def __init__(self, binary, root, d=4, forget_within="60s", init=None, init_extra=(), serve_extra=(), budget=None):
        """init, if given, replaces the store's --kind and --d (a store made
        from a data file: --data FILE and its flags); init_extra and
        serve_extra are more flags of init and serve; budget, (ε, δ), makes
        the store's budget ledger."""
        self.bin, self.root, self.d = binary, root, d
        os.makedirs(root, exist_ok=True)
        self.store = os.path.join(root, "store")
        self.key = os.path.join(root, "certifier")
        self.pub = self.key + ".pub"
        run(binary, "keygen", "--out", self.key)
        shape = init if init is not None else ["--kind", "logistic", "--d", str(d)]
        run(binary, "init", "--store", self.store, *shape, "--tau", "5", "--checkpoint-every", "40", *init_extra)
        if budget is not None:
            run(binary, "budget", "--ledger", os.path.join(self.store, "budget.ledger"), "--init",
                "--epsilon", str(budget[0]), "--delta", str(budget[1]), "--key", self.key + ".key")
        self.tokens = {}
        for scopes in ("all", "ingest", "predict", "forget", "release", "read"):
            self.tokens[scopes] = run(binary, "token", "create", "--store", self.store, "--scopes", scopes).strip()
        self.log = open(os.path.join(root, "serve.log"), "w")
        self.proc = subprocess.Popen([binary, "serve", "--store", self.store, "--addr", "127.0.0.1:0", "--key", self.key + ".key",
                                      "--forget-within", forget_within, *serve_extra],
                                     stdout=subprocess.PIPE, stderr=self.log, text=True)
        ready, _, _ = select.select([self.proc.stdout], [], [], 30)
        if not ready:
            self.stop()
            raise AssertionError("unlearn serve did not start within 30 s")
        line = self.proc.stdout.readline()
        assert line.startswith("listening on "), line
        self.url = line.split()[-1]

    def stop(self):
        """SIGTERM, as an operator would: the service shuts down gracefully."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        return self.proc.returncode


@pytest.fixture
def service(unlearn_bin, tmp_path):
    s = Service(unlearn_bin, str(tmp_path))
    yield s
    assert s.stop() == 0, "unlearn serve exited with %s" % s.proc.returncode


@pytest.fixture
def slow_service(unlearn_bin, tmp_path):
    """A service whose deadline is an hour: requests stay queued unless a
    client asks to wait."""
    s = Service(unlearn_bin, str(tmp_path), forget_within="1h")
    yield s
    assert s.stop() == 0


def dataset(n, d, seed=1):
    """n logistic rows of dimension d: features in [-1, 1], labels ±1 from a
    fixed linear rule with 10% of them flipped."""
    rng = random.Random(seed)
    beta = [rng.uniform(-1, 1) for _ in range(d)]
    X, y = [], []
    for _ in range(n):
        x = [rng.uniform(-1, 1) for _ in range(d)]
        label = 1.0 if sum(a * b for a, b in zip(x, beta)) >= 0 else -1.0
        if rng.random() < 0.1:
            label = -label
        X.append(x)
        y.append(label)
    return X, y


def wait_for(pred, timeout=10.0):
    end = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > end:
            raise AssertionError("condition not met within %s s" % timeout)
        time.sleep(0.05)

"""What a run that lost its lock says about its records (issue 32, point 6), on the built binary against a real
emulator, local and gcs state. A holder is paused past its lease (SIGSTOP) and resumed (SIGCONT) after:
another run took the lock over and applied (folding the paused run's journal into the state and removing
it); the lock was removed with `state unlock` and nobody wrote (the journal is still there); the lock was
removed and the journal moved aside (the paused run holds the only copy of its records, and records them
under a lock it takes again); or another holder has the lock and the journal was moved aside (the records
are lost unless it is put back). The paused run once said "its journal keeps every record" in every case;
now each says what is really left, and what it says to do is done here and works."""
import json
import os
import signal
import subprocess
import time

import pytest

from fcmharness import FCMCTL, Emulator, FakeGCS, run, wait_until

PROJECT = "takeover"
LEASE = "3"


def manifest(path, count, store):
    members = "".join(f'      - "take-{i:04d}:APA91b{"t" * 30}"\n' for i in range(count))
    state = "state: {backend: gcs, bucket: fcm, prefix: take}\n" if store == "gcs" else ""
    path.write_text(f'project: {{id: {PROJECT}, senderId: "7"}}\n{state}topics:\n  news:\n    members:\n{members}')


def news_subscribers(emulator):
    registrations = emulator.request("GET", "/emulator/v1/state")["registrations"]
    return sum("news" in item.get("topics", []) for item in registrations)


def holds_flock(pid):
    """Whether `pid` holds a flock(2) lock, by /proc/locks (the local store's directory lock is one)."""
    with open("/proc/locks") as locks:
        return any(fields[1] == "FLOCK" and fields[4] == str(pid) for fields in (line.split() for line in locks) if len(fields) > 4)


def operations_done(out):
    """N of the paused run's "topic/news: N operations done" line."""
    return next(int(line.split(": ")[1].split()[0]) for line in out.splitlines() if line.startswith("topic/news: ") and "operations done" in line)


class World:
    def __init__(self, store, tmp_path):
        self.store, self.tmp_path = store, tmp_path
        self.emulator = Emulator()
        self.gcs = FakeGCS() if store == "gcs" else None
        self.env = {"FCMCTL_LOCK_LEASE": LEASE, "FCM_EMULATOR_HOST": self.emulator.host}
        if self.gcs:
            self.gcs.create_bucket("fcm")
            self.env["STORAGE_EMULATOR_HOST"] = self.gcs.host
        self.state_args = [] if self.gcs else ["--state", str(tmp_path / "state.json")]
        self.first, self.second = tmp_path / "first.yaml", tmp_path / "second.yaml"
        manifest(self.first, 2000, store)
        manifest(self.second, 100, store)

    def stop(self):
        self.emulator.stop()
        if self.gcs:
            self.gcs.stop()

    def run(self, args):
        # Only the paused holder needs the short lease (the test waits for it to run out); the runs after it
        # keep the default, so a loaded machine that is slow to renew a 3-second lease cannot fail them.
        return run([*args, *self.state_args], env={**self.env, "FCMCTL_LOCK_LEASE": "30"})

    def lock(self):
        if self.gcs:
            return json.loads(self.gcs.get("fcm", "take/state.lock")[0])
        return json.loads((self.tmp_path / "state.json.lock").read_text())

    def journal(self):
        if self.gcs:
            return self.gcs.names("fcm", "take/journal/")
        return ["state.json.journal"] if (self.tmp_path / "state.json.journal").exists() else []

    def move_journal_aside(self):
        if self.gcs:
            aside = {name: self.gcs.get("fcm", name)[0] for name in self.journal()}
            for name in aside:
                self.gcs.delete("fcm", name)
            return aside
        (self.tmp_path / "state.json.journal").rename(self.tmp_path / "aside.journal")
        return None

    def put_back(self, aside):
        if self.gcs:
            for name, data in aside.items():
                self.gcs.put("fcm", name, data)
        else:
            (self.tmp_path / "aside.journal").rename(self.tmp_path / "state.json.journal")

    def put_lock(self, lock):
        if self.gcs:
            self.gcs.put("fcm", "take/state.lock", json.dumps(lock).encode())
        else:
            (self.tmp_path / "state.json.lock").write_text(json.dumps(lock))

    def serial(self):
        text = self.gcs.get("fcm", "take/state.json")[0] if self.gcs else (self.tmp_path / "state.json").read_bytes()
        return json.loads(text)["serial"]

    def paused_holder(self):
        """An apply of the first manifest, paused mid-run with its lease run out."""
        holder = subprocess.Popen([FCMCTL, "apply", "--auto-approve", "-f", str(self.first), "--qps", "150", "--parallelism", "8",
                                   *self.state_args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                  env={**os.environ, **self.env})
        assert wait_until(lambda: news_subscribers(self.emulator) >= 150), "the first apply never got going"
        holder.send_signal(signal.SIGSTOP)
        # Stopped while renewing its lease, the holder would keep the state directory's flock (held for the
        # moments a lock-file write takes) and every later run would wait on it: stopped again between two.
        while holds_flock(holder.pid):
            holder.send_signal(signal.SIGCONT)
            assert wait_until(lambda: not holds_flock(holder.pid), 10), "the holder kept the state directory's flock"
            holder.send_signal(signal.SIGSTOP)
        expires = self.lock()["expires"]
        assert wait_until(lambda: time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()) > expires), "the lease never ran out"
        return holder

    @staticmethod
    def resume(holder):
        holder.send_signal(signal.SIGCONT)
        out, err = holder.communicate(timeout=120)
        assert holder.returncode == 1, out + err
        return out, err


@pytest.fixture(params=["local", "gcs"])
def world(request, tmp_path):
    world = World(request.param, tmp_path)
    yield world
    world.stop()


def test_after_a_takeover_the_paused_run_says_its_journal_was_folded_in(world):
    holder = world.paused_holder()
    second = world.run(["apply", "--auto-approve", "-f", str(world.second), "--lock-timeout", "30s"])
    assert second.returncode == 0 and "took over the state lock" in second.stderr, second.stderr
    assert world.journal() == [], "the run that took over folded the paused run's journal in and removed it"
    serial = world.serial()

    out, err = world.resume(holder)
    assert "keeps every record" not in out + err
    assert "so it wrote no state. Nothing this run recorded is lost: a later write folded its journal into the state" in err, err
    assert f"(this run began on serial 1; the state is now serial {serial};" in err, err
    assert f"This run wrote no state; its journal was folded into the state by a later write (serial 1 is now {serial})" in out, out
    assert world.serial() == serial, "the paused run wrote nothing"
    # As it says: nothing left to write, and the state is the second run's.
    plan = world.run(["plan", "--detailed-exitcode", "-f", str(world.second)])
    assert plan.returncode == 0, plan.stdout + plan.stderr


def test_a_run_whose_lock_was_removed_keeps_its_journal_for_the_next_run(world):
    holder = world.paused_holder()
    lock = world.lock()
    unlocked = world.run(["state", "unlock", lock["id"], "-f", str(world.first)])
    assert unlocked.returncode == 0, unlocked.stderr

    out, err = world.resume(holder)
    assert "so it wrote no state. Its journal is kept: every completed operation is in" in err, err
    assert "This run wrote no state; its journal keeps every record, and the next run folds it in." in out, out
    assert world.journal() != [] and world.serial() == 1, "nothing folded it in, and the paused run wrote nothing"
    # As it says: the next run folds it in, and converges.
    again = world.run(["apply", "--auto-approve", "-f", str(world.first)])
    assert again.returncode == 0, again.stderr
    assert "Recovered" in again.stderr and world.journal() == []
    assert news_subscribers(world.emulator) == 2000
    assert world.run(["plan", "--detailed-exitcode", "-f", str(world.first)]).returncode == 0


def test_a_run_whose_lock_and_journal_were_removed_records_its_operations_itself(world):
    holder = world.paused_holder()
    assert world.run(["state", "unlock", world.lock()["id"], "-f", str(world.first)]).returncode == 0
    world.move_journal_aside()

    out, err = world.resume(holder)
    assert "keeps every record" not in out + err
    assert "so this run held the only copy of its records: it took the lock again and recorded them in the state (serial 2)" in err, err
    assert world.serial() == 2 and world.journal() == []
    done = operations_done(out)
    listed = world.run(["state", "list", "topic/news", "-f", str(world.first), "--show-tokens"])
    assert listed.stdout.count("topic/news/take-") >= done > 0, listed.stdout[-300:]
    again = world.run(["apply", "--auto-approve", "-f", str(world.first)])
    assert again.returncode == 0, again.stderr
    listed = world.run(["state", "list", "topic/news", "-f", str(world.first), "--show-tokens"])
    assert listed.stdout.count("topic/news/take-") == 2000, "every subscription is fcmctl's: none left as an orphan"


def test_a_journal_lost_under_another_holder_is_reported_with_what_it_held(world):
    holder = world.paused_holder()
    # As if another runner took the lock over and has not written yet, while the journal was moved aside.
    taken = {**world.lock(), "id": "0f0f0f0f", "who": "ci@runner-9", "host": "runner-9", "pid": 4242, "expires": "2099-01-01T00:00:00Z"}
    world.put_lock(taken)
    aside = world.move_journal_aside()

    out, err = world.resume(holder)
    assert "keeps every record" not in out + err
    done = operations_done(out)
    assert "Its journal is gone from" in err and "is still at serial 1, where this run began" in err, err
    assert f"the records of {done} completed operations are lost (topic/news: {done})" in err, err
    assert "If the journal was moved aside, put it back where it was before that run writes: the next write folds it in" in err
    assert "This run wrote no state, and its journal was removed without being folded in" in out, out
    assert world.serial() == 1, "the paused run wrote nothing under another holder's lock"
    # As it says: the journal put back and the other holder gone, the next run folds it in; nothing is an orphan.
    world.put_back(aside)
    assert world.run(["state", "unlock", "0f0f0f0f", "-f", str(world.first)]).returncode == 0
    again = world.run(["apply", "--auto-approve", "-f", str(world.first)])
    assert again.returncode == 0 and "Recovered" in again.stderr, again.stderr
    listed = world.run(["state", "list", "topic/news", "-f", str(world.first), "--show-tokens"])
    assert listed.stdout.count("topic/news/take-") == 2000

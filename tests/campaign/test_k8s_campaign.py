"""The Kubernetes campaign driver against a fake `kubectl` that records its calls (issue 31): it applies
in the site's namespace, ends a job's wait when the job fails (not at the time limit), saves the log of
the pod Megatron prints from (the last rank, on the last worker), and deletes only the job, never the
namespace's shared LocalQueue."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from primus_lang.bench.logs import ending
from primus_lang.cli import main
from primus_lang.resources import data_dir

FAKE = """#!/usr/bin/env bash
echo "$*" >> "$CALLS"
case "$1" in
  get) case "$*" in *-c0*) echo "Created Running Succeeded" ;; *) echo "Created Failed" ;; esac ;;
  logs) echo " iteration        1/      30 | elapsed time per iteration (ms): 1000.0 |" ;;
esac
"""


def fake_cluster(tmp_path: Path, kubectl: str, **extra: str) -> dict[str, str]:
    """The environment of a campaign run against ``kubectl`` (a script that logs its arguments to $CALLS):
    `sleep` returns at once, so a poll never waits in a test."""
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "kubectl").write_text(kubectl)
    (fake / "kubectl").chmod(0o755)
    (fake / "sleep").write_text("#!/usr/bin/env bash\nexit 0\n")
    (fake / "sleep").chmod(0o755)
    return {**os.environ, "PATH": f"{fake}:{os.environ['PATH']}", "CALLS": str(tmp_path / "calls"), **extra}


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_the_k8s_campaign_applies_in_the_sites_namespace_and_deletes_only_jobs(tmp_path: Path) -> None:
    out = tmp_path / "plan"
    space = data_dir("examples") / "sites" / "llama3_1_8b_h100_k8s.prx"
    assert main(["plan", str(space), "--budget", "6", "--shortlist", "2", "--out", str(out)]) == 0
    driver = out / "campaign" / "campaign.sh"
    env = fake_cluster(tmp_path, FAKE)
    calls = tmp_path / "calls"
    done = subprocess.run(["bash", str(driver)], env=env, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 1 and "failed" in done.stderr  # job 1 failed: said at once, the run exits 1
    lines = calls.read_text().splitlines()
    applied = [c for c in lines if c.startswith("apply")]
    assert len(applied) == 2 and all("-n llm-training" in c for c in applied)
    deleted = [c for c in lines if c.startswith("delete")]
    # each job and its scripts' ConfigMap, by name: never the namespace's LocalQueue (`-f` would take it too)
    # (a job of the same name an interrupted run left is deleted before the apply, too)
    assert len(deleted) == 6 and all(" -f " not in c for c in deleted)
    assert [c.split()[3].split("/")[0] for c in deleted] == ["pytorchjob", "pytorchjob", "configmap"] * 2
    # how the failed job ended, appended to its log for `learn`: the operator's reason (the fake's `get` says it)
    assert "primusc campaign: pytorchjob/" in (out / "campaign" / "job-1" / "train.log").read_text()
    logs = [c for c in lines if c.startswith("logs")]
    # 8 nodes: the master and workers 0-6; the last prints the iterations, the master (rank 0) the arguments
    assert [c.rsplit("-", 2)[-2:] for c in logs] == [["worker", "6"], ["master", "0"]] * 2
    assert "elapsed time per iteration" in (out / "campaign" / "job-0" / "train.log").read_text()
    assert (out / "campaign" / "job-0" / "rank0.log").is_file()


QUEUED = """#!/usr/bin/env bash
echo "$*" >> "$CALLS"
case "$1" in
  get) n=$(($(cat "$POLLS") + 1)); echo "$n" > "$POLLS"
       if ((n < 200)); then echo "Created"; elif ((n == 200)); then echo "Created Running"
       else echo "Created Running Succeeded"; fi ;;
  logs) echo " iteration        1/      30 | elapsed time per iteration (ms): 1000.0 |" ;;
esac
"""


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_time_in_the_queue_does_not_count_against_the_limit(tmp_path: Path) -> None:
    """Kueue may hold a job longer than its run's limit: 200 polls queued is past it (the site's limit
    is under 2,000 s, 10 s a poll), and the job then runs and succeeds."""
    out = tmp_path / "plan"
    space = data_dir("examples") / "sites" / "llama3_1_8b_h100_k8s.prx"
    assert main(["plan", str(space), "--budget", "6", "--shortlist", "1", "--out", str(out)]) == 0
    driver = out / "campaign" / "campaign.sh"
    limit = int(next(line for line in driver.read_text().splitlines() if line.startswith("SECONDS_LIMIT="))
                .split("=")[1].split()[0])
    assert limit < 2000
    polls = tmp_path / "polls"
    polls.write_text("0")
    env = fake_cluster(tmp_path, QUEUED, POLLS=str(polls))
    done = subprocess.run(["bash", str(driver)], env=env, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    assert "is running" in done.stdout and int(polls.read_text()) == 201
    # the driver enforces the limit while it runs; the job's own deadline is the backstop should it stop (counted
    # from when the operator first sees the job, so past the driver's wait to start too), and a plan's own
    # launch has none
    job = next(d for d in yaml.safe_load_all((out / "campaign" / "job-0" / "pytorchjob.yaml").read_text())
           if d["kind"] == "PyTorchJob")
    assert job["spec"]["runPolicy"]["activeDeadlineSeconds"] == limit + 86_400  # the driver's longest wait too
    own = next(d for d in yaml.safe_load_all((out / "pytorchjob.yaml").read_text()) if d["kind"] == "PyTorchJob")
    assert "activeDeadlineSeconds" not in own["spec"]["runPolicy"]


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_a_job_that_never_starts_fails_after_the_queue_limit(tmp_path: Path) -> None:
    """A job Kueue never admits (or whose image never pulls) stays `Created`: the driver gives it
    QUEUE_SECONDS, then counts it failed and goes on, instead of waiting forever."""
    out = tmp_path / "plan"
    space = data_dir("examples") / "sites" / "llama3_1_8b_h100_k8s.prx"
    assert main(["plan", str(space), "--budget", "6", "--shortlist", "1", "--out", str(out)]) == 0
    env = fake_cluster(tmp_path, '#!/usr/bin/env bash\necho "$*" >> "$CALLS"\ncase "$1" in get) echo "Created" ;; esac\n',
                       QUEUE_SECONDS="600")
    calls = tmp_path / "calls"
    done = subprocess.run(["bash", str(out / "campaign" / "campaign.sh")], env=env, capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 1 and "did not start within 600 s" in done.stderr
    assert sum(c.startswith("get") for c in calls.read_text().splitlines()) == 60  # at 0 s, 10 s, ... 590 s
    assert any(c.startswith("delete") for c in calls.read_text().splitlines())


FAILED_JOB = """#!/usr/bin/env bash
echo "$*" >> "$CALLS"
case "$*" in
  "get pods"*) echo 'job-worker-1 Evicted Error (exit 137);job-master-0  Completed (exit 0);job-worker-2  (exit );job-worker-3 Evicted Completed (exit 0);' ;;
  *'type=="Failed"'*) echo "PyTorchJobFailed: PyTorchJob job is failed because 1 Worker replica(s) failed." ;;
  get*) echo "Created Running Failed" ;;
  logs*) echo " iteration        1/      30 | elapsed time per iteration (ms): 1000.0 |" ;;
esac
"""


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_a_failed_job_says_why_its_pods_ended_and_a_leftover_job_is_deleted_first(tmp_path: Path) -> None:
    """The operator's condition says only that a replica failed (a trial's evicted pod read as a crash): the
    pods' own reasons are appended to the saved log; a job of the same name left by an interrupted run is
    deleted before the apply (its old condition would have been read as this run's)."""
    out = tmp_path / "plan"
    space = data_dir("examples") / "sites" / "llama3_1_8b_h100_k8s.prx"
    assert main(["plan", str(space), "--budget", "6", "--shortlist", "1", "--out", str(out)]) == 0
    env = fake_cluster(tmp_path, FAILED_JOB)
    calls = tmp_path / "calls"
    done = subprocess.run(["bash", str(out / "campaign" / "campaign.sh")], env=env, capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 1
    said = calls.read_text().splitlines()
    first_delete = next(i for i, c in enumerate(said) if c.startswith("delete") and "pytorchjob/" in c)
    assert first_delete < next(i for i, c in enumerate(said) if c.startswith("apply"))
    assert all("--ignore-not-found=true" in c for c in said if c.startswith("delete"))
    log = next((out / "campaign").glob("job-0/*.log")).read_text()
    assert log.splitlines()[-1].endswith("1 Worker replica(s) failed.; pods: job-worker-1 Evicted Error (exit 137), "
                                         "job-worker-3 Evicted Completed (exit 0)")
    assert ending(log.splitlines()[-1]) == "evicted"
    assert ending("primusc campaign: pytorchjob/j failed: R: M; pods: j-worker-0 OOMKilled (exit 137)") == "host out of memory"
